// Package deployplan is deploy-web's deploy engine: it answers "what exactly
// would deploying this revision to this non-production namespace do, what
// blocks it, and how do I undo it?", then applies inside a declared boundary
// and only with explicit confirmation.
//
// An environment comes from the environments file, read by package
// envconfig (envconfig.LoadConfig, Config.Env): one cluster, one
// namespace, a source (a local kustomize folder, or a git repository, ref
// and path read with go-git), an artifact catalog, a protected flag, an
// allowlist of suspended template Jobs and HTTP health checks. docs/plan-and-apply.md documents the formats.
//
// The API the console calls:
//
//	cfg, err := envconfig.LoadConfig("deploy.yaml")
//	env, err := cfg.Env("sample-dev")
//	rep, err := deployplan.Plan(ctx, env, deployplan.Options{Progress: func(step string) { ... }})
//	rep.Status()      // "blocked" or "ready"
//	rep.Markdown()    // the report as CommonMark + GFM tables (the console offers it as a download)
//	rep.Summary()     // a short terminal summary
//	rep.JSON()        // the contract; ValidateReport checks it
//	rep, err = deployplan.Apply(ctx, env, deployplan.ApplyOptions{Options: opts, Request: deployplan.ApplyRequest{
//		Env: "sample-dev", ConfirmEnv: "sample-dev", ConfirmedNonProduction: true}})
//
// Render never leaves the repository: the repository (fetched by go-git
// into a temporary object store on disk under the environment's Limits,
// its objects inflating to at most Limits.MaxInflatedBytes, or read from a
// local folder) is copied into an in-memory file system of at most
// Limits.MaxRepoFiles files and Limits.MaxRepoBytes bytes; every
// kustomization it reaches is checked before kustomize runs, and a remote
// reference, an absolute path or one out of the repository, a helmCharts
// entry with repo: or a plugin is refused with a *KustomizationError
// naming the file and the entry; kustomize then runs with builtin plugins
// only. Helm charts (source.helm, or a kustomization's helmCharts) are
// rendered in-process from the same in-memory copy by helmrender (helm.go:
// renderSeam), a chart refused being a *ChartError (blocker helm-chart). Every file read as
// YAML, and every inline patch, is measured first (internal/yamlbudget:
// alias expansion, nodes, depth, bytes; all of a render's files against
// Limits.MaxYAMLNodes), and one over its budget is a *TooComplexError
// (blocker yaml-too-complex) before any decoder expands it. Nothing is
// fetched (but the git source) or executed while rendering; the fetch's
// temporary store is the only thing written, and it is removed.
//
// Plan writes nothing: it renders the source with kustomize in memory,
// checks images, tags and env mirrors against the catalog (SourceChecks,
// also available offline as SourcePlan), gates the artifacts
// (ArtifactGates), sends a HEAD for each digest to its registry when the
// environment's registry.hosts lists it, and to no other host
// (RegistryCheck), and, on the cluster, checks that every object is inside
// the namespace (BoundaryCheck), runs a server-side dry-run apply of each
// with field manager "deploy-web", decides for each Job (JobDecision) and
// reads the namespace's health (objrules.HealthOf). Everything that stands
// in the way is a Blocker with an unblock hint; the report is blocked if and
// only if there are blockers (Conclude).
//
// Apply refuses (a *RefusalError, nothing touched) a protected environment,
// a forbidden flag, a missing confirmation, a blocked plan or a lock held by
// another apply (a Lease named LockName in the namespace). Otherwise it
// captures the pre-apply state next to the report, writes a report that
// says failed until it finishes, deletes only the allowlisted suspended
// template Jobs whose image changed, applies everything server-side (never
// forced), waits for workload health and ends applied or failed.
//
// Secret values are never read (Secrets are read and applied through the
// metadata client, so the server's answer carries metadata only), printed or
// stored; reports name Secrets by kind and name only.
package deployplan
