package deployplan

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// Options tune a plan (and the plan part of an apply).
type Options struct {
	// RestConfig reaches the cluster; nil resolves the environment's
	// cluster with RestConfig(env, Kubeconfig).
	RestConfig *rest.Config
	// Kubeconfig is the --kubeconfig flag (used when the environment names
	// no kubeconfig file).
	Kubeconfig string
	// ConfigPath is the config file as the user named it, for the manual
	// commands of the report.
	ConfigPath string
	// ReportPath is where the report will be written, for the manual
	// commands; "" means DefaultReportPath.
	ReportPath string
	// KeepArgs are flags the printed next commands repeat as given (the
	// command line's --audit-namespace), each "--name=value".
	KeepArgs []string
	// ExpectCommit is the commit every image must be tagged with; "" means
	// the catalog's commit.
	ExpectCommit string
	// Progress, when set, is told each step as it starts.
	Progress func(step string)
	// HTTPClient runs the health checks (default: a client bounded by the
	// environment's limits.healthCheckTimeout).
	HTTPClient *http.Client
	// RegistryTransport and RegistryTimeout tune the digest HEAD requests
	// (default timeout: the environment's limits.registryTimeout).
	RegistryTransport http.RoundTripper
	RegistryTimeout   time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Only, when set, narrows the plan (and an apply, ApplyOptions embeds
	// Options) to the rendered objects it keeps, before anything is
	// checked: the rendered digest, the checks, the dry-run and the apply
	// cover those alone, so a plan and the apply of it agree. Orphans are
	// not looked for (what the filter leaves out is no orphan) and Prune
	// is refused.
	Only *ObjectFilter
	// Force, when set, keeps the objects whose dry-run and apply are
	// forced: deploy-web takes over the fields another manager set
	// (ForceObjects: a self-heal's drifted objects). Without it, and for
	// every other object, deploy-web never forces: a conflict blocks.
	Force *ObjectFilter
}

func (o *Options) progress(format string, a ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, a...))
	}
}

func (o *Options) registryTimeout(env *envconfig.Environment) time.Duration {
	if o.RegistryTimeout > 0 {
		return o.RegistryTimeout
	}
	return env.Limits.RegistryTimeoutOrDefault()
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// SourceResult is the outcome of the offline source planner.
type SourceResult struct {
	Environment string
	// Namespace is the environment's namespace: every rendered object must
	// be in it (the offline part of the cluster plan's boundary check).
	Namespace     string
	Origin        string
	SourceCommit  string
	CatalogCommit string
	// CatalogMode is the catalog's mode: commit or version.
	CatalogMode string
	CatalogPath string
	Workloads   []Workload
	Divergences []Blocker
}

// SourceDisclaimer is printed with every source plan.
const SourceDisclaimer = "This source plan checks only the manifests and the catalog: it proves nothing about the registry or the cluster."

// SourcePlan renders the source and checks commit, image, tag, workload
// image and env-mirror convergence, offline.
func SourcePlan(ctx context.Context, env *envconfig.Environment, opts Options) (*SourceResult, error) {
	opts.progress("render %s", sourceLabel(env))
	r, err := Render(ctx, env)
	var tc *TooComplexError
	if errors.As(err, &tc) {
		// Nothing rendered: the file over its budget is the divergence.
		return &SourceResult{Environment: env.Name, Origin: sourceLabel(env), Divergences: []Blocker{tc.Blocker()}}, nil
	}
	var ce *ChartError
	if errors.As(err, &ce) {
		// Nothing rendered: the chart refused is the divergence.
		return &SourceResult{Environment: env.Name, Origin: sourceLabel(env), Divergences: []Blocker{ce.Blocker()}}, nil
	}
	if err != nil {
		return nil, err
	}
	res := &SourceResult{Environment: env.Name, Namespace: env.Namespace, Origin: r.Origin, SourceCommit: r.Commit, CatalogCommit: r.Catalog.Commit, CatalogMode: r.Catalog.Mode, CatalogPath: r.CatalogPath}
	for _, o := range r.Objects {
		if w, ok := WorkloadOf(o); ok {
			res.Workloads = append(res.Workloads, w)
		}
	}
	opts.progress("check images, tags and env mirrors against the catalog")
	res.Divergences = append(SourceChecks(res.Workloads, r.Catalog, env.EnvMirrors), WorkloadCheck(r.Objects)...)
	// What the artifact gates can see offline (unpublished services,
	// placeholders, missing digests, the expected commit) is a divergence
	// here too, with the same ids as in the dry-run.
	_, gates := ArtifactGates(res.Workloads, r.Catalog, opts.ExpectCommit, env.SkeletonPatternsOrDefault())
	res.Divergences = append(res.Divergences, gates...)
	// The boundary, as far as it is known offline: an object in another
	// namespace (a kustomize namespace: other than the environment's) or
	// of a well-known cluster-scoped kind is a divergence, with the id the
	// cluster plan's blocker has.
	opts.progress("check every object is inside namespace %s", env.Namespace)
	res.Divergences = append(res.Divergences, BoundaryCheck(r.Objects, env.Namespace, OfflineScope)...)
	res.Divergences = dedupeBlockers(res.Divergences)
	return res, nil
}

func sourceLabel(env *envconfig.Environment) string {
	if env.Source.Repo == "" {
		return env.Source.Path
	}
	return fmt.Sprintf("%s@%s:%s", envconfig.RedactURL(env.Source.Repo), env.Source.Ref, env.Source.Path)
}

// planState is a plan plus what Apply needs to act on it.
// objectChanges are an object's Changes and how many were left out.
type objectChanges struct {
	list    []Change
	omitted int
}

type planState struct {
	report   *Report
	rendered *Rendered
	objs     []*unstructured.Unstructured // in the boundary, in apply order
	live     map[string]*unstructured.Unstructured
	jobs     map[string]JobReplacement // by key
	changes  map[string]objectChanges  // by key, of the objects to update
	cl       *clients
	lock     *lease // held by an apply, nil for a plan
	// interrupted is set when ApplyOptions.Interrupt stopped the apply.
	interrupted bool
	// uids are, for a restore, the uid each captured object had (by key):
	// the run re-checks them under the lock (restoreUIDChecks).
	uids map[string]string
	// deps are the dependencies between the rendered Apps (depends.go),
	// read from every rendered object, those an ObjectFilter left out too.
	deps *appDeps
}

// Plan renders the source, checks the source, the artifacts, the registry
// and the cluster (server-side dry-run apply of every object), and returns
// the report; it writes nothing anywhere. An error means no plan could be
// made (bad source, unreadable catalog); everything else is a blocker.
func Plan(ctx context.Context, env *envconfig.Environment, opts Options) (*Report, error) {
	ps, err := plan(ctx, env, opts)
	if err != nil {
		return nil, err
	}
	return ps.report, nil
}

func plan(ctx context.Context, env *envconfig.Environment, opts Options) (*planState, error) {
	opts.progress("render %s", sourceLabel(env))
	r, err := renderFor(ctx, env, opts)
	if err != nil {
		return nil, err
	}
	if r, err = opts.Only.only(r); err != nil {
		return nil, err
	}
	return planRendered(ctx, env, opts, r)
}

// planRendered plans the objects r holds.
func planRendered(ctx context.Context, env *envconfig.Environment, opts Options, r *Rendered) (*planState, error) {
	var err error
	all := append(append([]*unstructured.Unstructured(nil), r.Objects...), r.outside...)
	ps := &planState{rendered: r, live: map[string]*unstructured.Unstructured{}, jobs: map[string]JobReplacement{}, deps: appDepsOf(all)}
	rep := &Report{}
	ps.report = rep
	d := &rep.DeployApply
	d.SchemaVersion, d.Environment, d.Mode, d.GeneratedAt = SchemaVersion, env.Name, "dry-run", opts.now().UTC()
	d.Target = Target{Context: env.Cluster.Context, Namespace: env.Namespace, Protected: env.Protected}
	if env.Cluster.InCluster {
		d.Target.Context = "(in-cluster)"
	}
	digest, err := RenderedDigest(r.Objects)
	if err != nil {
		return nil, err
	}
	d.Source = SourceInfo{Origin: r.Origin, Commit: r.Commit, CatalogPath: r.CatalogPath, Objects: len(r.Objects), RenderedDigest: digest, Only: opts.Only.name(), Charts: r.Charts}
	d.ApplyBoundary = boundary(env)
	d.TemplateJobReplacementPolicy = JobPolicy{Allowlist: append([]string{}, env.TemplateJobs.Allowlist...), Namespace: env.Namespace, Rules: jobRules}
	var blockers []Blocker
	// The render's warnings quote the repository (chart, object and file
	// names): one line each, no format characters, as every report line.
	warnings := make([]string, 0, len(r.Warnings))
	for _, w := range r.Warnings {
		warnings = append(warnings, textfmt.Cut(textfmt.Clean(w, false), 2048))
	}

	var workloads []Workload
	for _, o := range r.Objects {
		if w, ok := WorkloadOf(o); ok {
			workloads = append(workloads, w)
		}
	}
	opts.progress("check images, tags and env mirrors against the catalog")
	blockers = append(blockers, SourceChecks(workloads, r.Catalog, env.EnvMirrors)...)
	blockers = append(blockers, WorkloadCheck(r.Objects)...)
	blockers = append(blockers, WaveCheck(r.Objects)...)
	blockers = append(blockers, DependsOnCheck(all)...)
	expected := opts.ExpectCommit
	if expected == "" {
		expected = r.Catalog.Commit
	}
	ap, gates := ArtifactGates(workloads, r.Catalog, expected, env.SkeletonPatternsOrDefault())
	blockers = append(blockers, gates...)
	ap.SourceCommit = r.Commit
	if !env.Registry.Skip && len(env.Registry.Hosts) > 0 {
		opts.progress("HEAD each digest in its registry (registry.hosts: %s)", strings.Join(env.Registry.Hosts, ", "))
	}
	bs, ws := RegistryCheck(ctx, &ap, env.Registry, opts.registryTimeout(env), opts.RegistryTransport)
	blockers, warnings = append(blockers, bs...), append(warnings, ws...)
	d.ArtifactPlan = ap

	// The cluster.
	opts.progress("reach the cluster")
	var unreachable *Blocker
	ps.cl, d.Target.Cluster, unreachable = connectCluster(env, opts)
	reachable := unreachable == nil
	if !reachable {
		blockers = append(blockers, *unreachable)
	}
	actions := map[string]string{}
	if reachable {
		bs, ws := ps.clusterChecks(ctx, env, opts, actions)
		blockers, warnings = append(blockers, bs...), append(warnings, ws...)
		warnings = append(warnings, newJobWarnings(ps.jobs)...)
		if opts.Only == nil {
			opts.progress("look for orphans (objects deploy-web applied that are no longer rendered)")
			orphans, ows := ps.cl.findOrphans(ctx, env, r.Objects, opts)
			d.Orphans, warnings = orphans, append(warnings, ows...)
		} else {
			warnings = append(warnings, fmt.Sprintf("this plan covers %s only (%d object(s)): the other rendered objects and the orphans are neither checked nor applied", opts.Only.Name, len(r.Objects)))
		}
		opts.progress("read the namespace's current health")
		d.CurrentHealth = ps.cl.namespaceHealth(ctx, env.Namespace)
	} else {
		d.CurrentHealth = NamespaceHealth{Status: string("Unknown"), Message: "cluster not reachable"}
		ps.objs = append([]*unstructured.Unstructured(nil), r.Objects...)
		sortForApply(ps.objs, ps.deps)
	}
	d.Waves = wavePlans(wavesOf(ps.objs, ps.deps))

	// Objects, workloads, services.
	kinds := map[string]bool{}
	autoscaled := autoscaledTargets(r.Objects)
	if reachable {
		warnings = append(warnings, leftRenderAutoscaled(r.Objects, autoscaled, ps.cl.liveAutoscalers(ctx, env.Namespace))...)
	}
	for _, o := range r.Objects {
		a := actions[key(o)]
		if a == "" {
			a = ActionUnknown
		}
		op := ObjectPlan{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Action: a,
			Drift: objectDrift(ps.live[key(o)], autoscaled[o.GetKind()+"/"+o.GetName()]), Changes: ps.changes[key(o)].list, ChangesOmitted: ps.changes[key(o)].omitted}
		if isSecret(o) {
			op.Message = "Secret: values are never read, printed or stored"
		}
		op.Hook = hookOf(o)
		d.Objects = append(d.Objects, op)
		if o.GetNamespace() == env.Namespace {
			kinds[o.GetKind()] = true
		}
	}
	for _, o := range r.Objects {
		w, ok := WorkloadOf(o)
		if !ok {
			continue
		}
		a := actions[key(o)]
		if a == "" {
			a = ActionUnknown
		}
		d.WorkloadPlan = append(d.WorkloadPlan, WorkloadPlan{Kind: w.Kind, Name: w.Name, Containers: w.Containers, Replicas: w.Replicas, Action: a})
	}
	d.ServicePlan = servicePlan(r.Objects, workloads, r.Catalog)
	for _, o := range r.Objects {
		if j, ok := ps.jobs[key(o)]; ok {
			d.TemplateJobReplacements = append(d.TemplateJobReplacements, j)
		}
	}
	d.ApplyBoundary.WriteScope.Kinds = append(sortedKeys(kinds), "Lease/"+LockName+" (the apply lock)", "ConfigMap/"+CaptureRecordName+" (the capture record)")

	opts.progress("run the health checks")
	d.HealthChecks = runHealthChecks(ctx, env.HealthChecks, opts.HTTPClient, env.Limits.HealthCheckTimeoutOrDefault())
	bs, ws = healthCheckBlockers(d.HealthChecks)
	blockers, warnings = append(blockers, bs...), append(warnings, ws...)

	d.RemainingBlockers = blockers
	d.Warnings = warnings
	d.normalize()
	Conclude(d)
	d.ManualCommands = manualCommands(env, opts, d.Conclusion.Status == StatusReady)
	d.RollbackHint = rollbackHint(env, d, "", opts)
	return ps, nil
}

// clusterChecks runs the namespace, boundary, dry-run and Job checks.
func (ps *planState) clusterChecks(ctx context.Context, env *envconfig.Environment, opts Options, actions map[string]string) ([]Blocker, []string) {
	var blockers []Blocker
	var warnings []string
	cl := ps.cl
	nsMissing := false
	if _, err := cl.kube.CoreV1().Namespaces().Get(ctx, env.Namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		nsMissing = true
	} else if err != nil && !apierrors.IsForbidden(err) {
		warnings = append(warnings, fmt.Sprintf("could not read namespace %s: %v", env.Namespace, err))
	}
	opts.progress("check every object is inside namespace %s", env.Namespace)
	blockers = append(blockers, BoundaryCheck(ps.rendered.Objects, env.Namespace, cl.scope)...)
	blockers = append(blockers, ReservedCheck(ps.rendered.Objects)...)
	for _, o := range ps.rendered.Objects {
		if o.GetNamespace() != env.Namespace || ReservedName(o) != "" {
			actions[key(o)] = ActionBlocked
			continue
		}
		if namespaced, known := cl.scope(o.GroupVersionKind()); !known || !namespaced {
			actions[key(o)] = ActionBlocked
			continue
		}
		ps.objs = append(ps.objs, o)
	}
	sortForApply(ps.objs, ps.deps)
	if nsMissing {
		// The one root cause: every dry-run would fail with "namespace
		// not found", which is no fault of the manifests.
		b := namespaceMissing(env.Namespace, ps.objs)
		for _, o := range ps.objs {
			actions[key(o)] = ActionBlocked
		}
		return append(blockers, b), warnings
	}
	opts.progress("server-side dry-run apply of %d object(s) as %s", len(ps.objs), FieldManager)
	results := cl.dryRunAll(ctx, ps.objs)
	for i, o := range ps.objs {
		k := key(o)
		ref := o.GetKind() + "/" + o.GetName()
		live, err := results[i].live, results[i].readErr
		if err != nil {
			blockers = append(blockers, Blocker{ID: "read:" + ref, Message: fmt.Sprintf("cannot read %s: %v", ref, objErr(o, err)), UnblockHint: "grant deploy-web get on this kind in the namespace"})
			actions[k] = ActionBlocked
			continue
		}
		if live != nil {
			ps.live[k] = live
		}
		dry, err := results[i].dry, results[i].dryErr
		isJob := o.GroupVersionKind().Group == "batch" && o.GetKind() == "Job"
		immutable := err != nil && isJob && IsImmutableTemplate(err)
		if isJob {
			j := JobDecision(o, live, env.Allowlisted(o.GetName()), immutable)
			ps.jobs[k] = j
			if b, bad := JobBlocker(j, fmt.Sprintf("add %s to templateJobs.allowlist of %s if it is a template Job that may be replaced, or keep its pod template unchanged", o.GetName(), env.Name)); bad {
				blockers = append(blockers, b)
				actions[k] = ActionBlocked
				continue
			}
			if j.Result == JobPlanned {
				actions[k] = ActionReplace
				continue
			}
		}
		switch {
		case err == nil:
			// A Secret too: its metadata copies carry the hash of the
			// values, or who wrote them since deploy-web (metadataOnly).
			actions[k] = ObjectAction(live, dry)
			if actions[k] == ActionUpdate {
				if ps.changes == nil {
					ps.changes = map[string]objectChanges{}
				}
				list, omitted := Changes(live, dry)
				ps.changes[k] = objectChanges{list, omitted}
			}
		case apierrors.IsConflict(err):
			blockers = append(blockers, conflictBlocker(env, opts.Kubeconfig, o, err))
			actions[k] = ActionBlocked
		default:
			blockers = append(blockers, Blocker{ID: "dry-run:" + ref, Message: fmt.Sprintf("server-side dry-run of %s failed: %v", ref, objErr(o, err)),
				UnblockHint: "fix the manifest so the API server accepts it"})
			actions[k] = ActionBlocked
		}
	}
	return blockers, warnings
}

// namespaceMissing is the blocker of a plan whose namespace does not
// exist; it names every object that would go there, and is the only
// blocker about them (their dry-runs are not tried).
func namespaceMissing(ns string, objs []*unstructured.Unstructured) Blocker {
	b := Blocker{ID: "namespace-missing", Message: fmt.Sprintf("namespace %s does not exist, so none of its %d object(s) can be planned", ns, len(objs)),
		UnblockHint: fmt.Sprintf("create it out of band (kubectl create namespace %s): deploy-web never writes cluster-scoped objects; then plan again", ns)}
	for _, o := range objs {
		b.Affected = append(b.Affected, o.GetKind()+"/"+o.GetName())
	}
	return b
}

var jobRules = []string{
	"only Jobs named in templateJobs.allowlist are ever deleted",
	"a Job is replaced only when it is suspended live and in the manifest, and its image changed",
	"the Job must be in the environment's namespace",
	"any other change to a Job's pod template is a blocker",
	"a replaced Job is deleted (with its uid as precondition) and re-created by server-side apply",
}

func boundary(env *envconfig.Environment) ApplyBoundary {
	return ApplyBoundary{
		DefaultMode:        "no-write",
		RequiredApplyFlags: []string{"--apply", "--confirm-env=" + env.Name, "--confirmed-non-production"},
		WriteScope:         WriteScope{Namespace: env.Namespace},
		NoWriteScope: []string{
			"cluster-scoped objects (Namespaces, CRDs, ClusterRoles, ...)",
			"every namespace other than " + env.Namespace,
			"objects that are not rendered from the source",
			"Jobs not in the allowlist (never deleted)",
			"git repositories (read only: no commit, no push)",
		},
		ForbiddenActions: []string{
			"apply to a protected (production) environment",
			"read, print or store Secret values",
			"force server-side apply over another field manager",
			"git push or force-push",
			"delete anything but allowlisted suspended template Jobs whose image changed",
		},
	}
}

func quoteArg(s string) string {
	if s == "" || strings.ContainsAny(s, " \t'\"$`\\?*[]&;|<>(){}~#!") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

func manualCommands(env *envconfig.Environment, opts Options, ready bool) []string {
	cfg := opts.ConfigPath
	if cfg == "" {
		cfg = "deploy.yaml"
	}
	rp := opts.ReportPath
	if rp == "" {
		rp = DefaultReportPath(env.Name)
	}
	base := fmt.Sprintf("deploy-web apply --config %s --env %s", quoteArg(cfg), env.Name)
	for _, a := range opts.KeepArgs {
		base += " " + quoteArg(a)
	}
	cmds := []string{
		base + " --dry-run --write-report " + quoteArg(rp),
		"deploy-web validate-report " + quoteArg(rp),
	}
	if ready && !env.Protected {
		// The apply names this plan (--plan): it is refused if the source
		// moved since. Its report goes beside the plan's, not over it.
		cmds = append(cmds, fmt.Sprintf("%s --apply --confirm-env=%s --confirmed-non-production --plan %s --write-report %s", base, env.Name, quoteArg(rp), quoteArg(strings.TrimSuffix(rp, ".json")+".apply.json")))
	}
	return cmds
}

// commandsAfterWrite are the next commands after an apply or a restore
// wrote reportPath: plan again (the source against what the cluster holds
// now) into a report of its own, never over reportPath, and check it. A
// restore's own command is never repeated.
func commandsAfterWrite(env *envconfig.Environment, opts Options, reportPath string) []string {
	planPath := DefaultReportPath(env.Name)
	if filepath.Clean(planPath) == filepath.Clean(reportPath) {
		planPath = strings.TrimSuffix(reportPath, ".json") + ".plan.json"
	}
	o := opts
	o.ReportPath = planPath
	return manualCommands(env, o, false)
}

func rollbackHint(env *envconfig.Environment, d *DeployApply, capture string, opts Options) RollbackHint {
	ns := env.Namespace
	kc := kubectlPrefix(env, opts.Kubeconfig)
	h := RollbackHint{PreApplyCapture: capture}
	if capture == "" {
		h.PreApplyCapture = "none yet: an apply writes it to " + filepath.Join("reports", env.Name, "pre-apply-<time>") + " before it changes anything"
	}
	capRef := capture
	if capRef == "" {
		capRef = "<capture>"
	}
	for _, o := range d.Objects {
		switch {
		case o.Action == ActionUpdate && (o.Kind == "Deployment" || o.Kind == "StatefulSet" || o.Kind == "DaemonSet"):
			h.DeploymentRollbacks = append(h.DeploymentRollbacks, fmt.Sprintf("%s -n %s rollout undo %s/%s", kc, ns, lower(o.Kind), o.Name))
		case o.Action == ActionCreate && o.Namespace == ns:
			h.DeploymentRollbacks = append(h.DeploymentRollbacks, fmt.Sprintf("%s -n %s delete %s/%s   # did not exist before", kc, ns, lower(o.Kind), o.Name))
		}
	}
	// The capture holds a file for every object that existed before,
	// Secrets aside; with none, kubectl apply -f of it fails ("recognized
	// file extensions are [.json .yaml .yml]") and a restore has nothing to
	// put back.
	captured := false
	for _, o := range d.Objects {
		captured = captured || (o.Namespace == ns && o.Kind != "Secret" && (o.Action == ActionUpdate || o.Action == ActionUnchanged || o.Action == ActionReplace))
	}
	if len(h.DeploymentRollbacks) > 0 && captured {
		h.DeploymentRollbacks = append(h.DeploymentRollbacks,
			restoreCommand(env, opts.ConfigPath, capRef)+"   # restore every captured object (lock, boundary, dry-run first)",
			fmt.Sprintf("%s -n %s apply --server-side --field-manager=%s -f %s   # the same with kubectl; Secrets are not captured: see %s", kc, ns, FieldManager, quoteArg(capRef), filepath.Join(capRef, CaptureReadmeFile)))
	}
	for _, j := range d.TemplateJobReplacements {
		if j.Result != JobPlanned && j.Result != JobReplaced {
			continue
		}
		h.SuspendedJobCleanup = append(h.SuspendedJobCleanup,
			fmt.Sprintf("%s -n %s delete job/%s && %s -n %s apply --server-side --field-manager=%s -f %s/*-job-%s.json   # back to %s", kc, ns, j.Job, kc, ns, FieldManager, capRef, j.Job, j.OldImage))
	}
	for _, o := range d.Objects {
		if o.Kind == "Deployment" || o.Kind == "StatefulSet" || o.Kind == "DaemonSet" {
			h.PostRollbackHealthChecks = append(h.PostRollbackHealthChecks, fmt.Sprintf("%s -n %s rollout status %s/%s --timeout=5m", kc, ns, lower(o.Kind), o.Name))
		}
	}
	for _, c := range env.HealthChecks {
		h.PostRollbackHealthChecks = append(h.PostRollbackHealthChecks, "curl -fsS "+quoteArg(c.URL))
	}
	return h
}

// servicePlan lists rendered Services with the catalog id of the workload
// their selector picks.
func servicePlan(objs []*unstructured.Unstructured, workloads []Workload, cat *Catalog) []ServicePlan {
	var out []ServicePlan
	for _, o := range objs {
		if o.GetKind() != "Service" || o.GroupVersionKind().Group != "" {
			continue
		}
		sp := ServicePlan{Name: o.GetName()}
		sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
		if len(sel) > 0 {
		find:
			for _, w := range workloads {
				if !selects(sel, w.PodLabels) {
					continue
				}
				for _, c := range w.Containers {
					if img, err := ParseImage(c.Image); err == nil {
						if s, ok := cat.Lookup(img); ok {
							sp.ServiceID = s.ID
							break find
						}
					}
				}
			}
		}
		ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			port := ServicePort{Protocol: "TCP"}
			port.Name, _ = pm["name"].(string)
			port.Port = toInt64(pm["port"])
			if pr, ok := pm["protocol"].(string); ok {
				port.Protocol = pr
			}
			switch tp := pm["targetPort"].(type) {
			case string:
				port.TargetPort = TargetPort{Name: tp}
			case nil:
				port.TargetPort = TargetPort{Number: port.Port}
			default:
				port.TargetPort = TargetPort{Number: toInt64(tp)}
			}
			sp.Ports = append(sp.Ports, port)
		}
		out = append(out, sp)
	}
	return out
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// connectCluster reaches the environment's cluster: its rest config
// (opts.RestConfig, else the environment's own), clients that stamp the
// environment's marker, and one version call. The blocker says why not;
// host is the API server's address whenever the config resolved.
func connectCluster(env *envconfig.Environment, opts Options) (cl *clients, host string, unreachable *Blocker) {
	cfg := opts.RestConfig
	if cfg == nil {
		var err error
		if cfg, err = RestConfig(env, opts.Kubeconfig); err != nil {
			return nil, "", &Blocker{ID: "cluster-unreachable", Message: err.Error(), UnblockHint: "fix the environment's cluster.context / kubeconfig"}
		}
	}
	cl, err := newClients(cfg)
	if err == nil {
		cl.env, cl.force = env.Name, opts.Force
		_, err = cl.disc.ServerVersion()
	}
	if err != nil {
		return cl, cfg.Host, &Blocker{ID: "cluster-unreachable", Message: fmt.Sprintf("cluster %s is not reachable: %v", cfg.Host, shortErr(err)),
			UnblockHint: "check the network path and credentials of the environment's kubeconfig context"}
	}
	return cl, cfg.Host, nil
}
