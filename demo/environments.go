package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The demo's deploy environments: one manifest repository (a bare git
// repository on disk, read and written through file://, with a working
// clone beside it) with a kustomize base and three overlays, and an
// environments file naming them: dev -> staging -> prod, the promotion
// chain, with staging one version behind dev at start.
const (
	// DevEnvironment deploys overlays/dev into StagingNamespace; it is not
	// protected, so the console may apply it.
	DevEnvironment = "dev"
	// StagingEnvironment deploys overlays/staging into PreprodNamespace;
	// it is promoted from dev (promotion.after) and auto-syncs its branch,
	// so it runs StagingVersion from the demo's start.
	StagingEnvironment = "staging"
	// ProdEnvironment renders overlays/prod for ProductionNamespace; it is
	// protected, so every apply is refused, and promoted from staging: a
	// promotion into it is a request, then a review branch.
	ProdEnvironment = "prod"
	// StagingNamespace is a platform namespace (the fleet shows what dev
	// applies there and the operator reconciles it). It holds dev's
	// first release once Start applied it (Options.ApplyEnvironment).
	StagingNamespace = "staging"
	// PreprodNamespace is the platform namespace StagingEnvironment
	// deploys to (the namespace "staging" is dev's, a name kept from the
	// two-environment demo).
	PreprodNamespace = "preprod"
	// ProductionNamespace is a platform namespace (so the matrix reads
	// prod and a promotion can target it). Prod's first commit (release
	// ProdVersion) is applied there as the demo starts; the console
	// never applies prod (protected).
	ProductionNamespace = "production"
	// HistoryNamespace holds the console's plan-history ConfigMaps.
	HistoryNamespace = "deploy-web"

	// ManifestBranch is the branch both environments follow.
	ManifestBranch = "main"
	// EnvironmentsFileName is the environments file in the demo folder.
	EnvironmentsFileName = "environments.yaml"
	// prodSeedFileName is prod's seed file (prodSeedYAML) beside it,
	// there while the demo starts.
	prodSeedFileName = "prod-seed.yaml"
	// manifestRepoDir is the working clone of the manifest repository in
	// the demo folder (a person commits there and pushes);
	// manifestBareDir is the bare repository the environments read and
	// the console pushes to (file://).
	manifestRepoDir = "manifests"
	manifestBareDir = "manifests.git"

	// AppCommit is the (made-up) application commit: base/ tags its
	// images with its first 12 characters (ImageTag; each overlay sets its
	// release's tags over them), the catalogs report it, and the made-up
	// digests derive from it.
	AppCommit = "7d1c4e9a2b3f60158c0ad1e2b4c6f8a9e0d3b5c7"

	// The releases of the promotion chain, each environment one step
	// behind the one before it. DevVersion is the release dev runs (the
	// branch head; dev's first commit runs DevPreviousVersion, which
	// staging/api can be rolled back to from its page: a commit through
	// write-back). StagingVersion is staging's release, ProdVersion the
	// release overlays/prod declares (nothing applies prod). Every overlay
	// sets its images' tags with kustomize's images field, and every
	// environment's catalog is in version mode, listing its own release
	// and the one a promotion (or, for dev, a rollback) brings into it:
	// dev's artifacts/catalog.json DevPreviousVersion and DevVersion,
	// artifacts/catalog-staging.json StagingVersion and DevVersion,
	// artifacts/catalog-prod.json ProdVersion and StagingVersion.
	DevVersion         = "1.5.0"
	DevPreviousVersion = "1.4.2"
	StagingVersion     = DevPreviousVersion
	ProdVersion        = "1.3.0"

	// PromotionSoak is the soak of staging's and prod's promotions: short,
	// so a fresh demo can be promoted at once (the default is 10m).
	PromotionSoak = "30s"

	manifestRegistry = "registry.demo.local/inventory/"

	// ChartApp is the App the demo renders from a Helm chart vendored in
	// the manifest repository (charts/web), through each overlay's
	// helmCharts entry with a values file per environment
	// (overlays/<env>/web-values.yaml, image.tag: the key a promotion or
	// a rollback edits). It follows the releases of the other Apps: dev
	// at DevVersion, staging at StagingVersion (promotable dev ->
	// staging), prod at ProdVersion.
	ChartApp = "web"
)

// ImageTag is the tag of the images of base/ (the overlays set their
// releases' tags).
var ImageTag = AppCommit[:12]

// EnvironmentApps are the Apps the demo's manifests declare (in every
// overlay); DevEnvironment applies them to StagingNamespace,
// StagingEnvironment to PreprodNamespace.
func EnvironmentApps() []string { return []string{"api", "worker"} }

// CatalogApps are the Apps of every environment's catalog: the
// EnvironmentApps, whose versions the overlays' images: set, and the
// chart App, whose version its values file sets.
func CatalogApps() []string { return append(EnvironmentApps(), ChartApp) }

// envLogApps gives the environments' Apps pod logs once they run (by
// container name: api and worker in every namespace).
func envLogApps() []seedApp {
	return []seedApp{{name: "api", logs: "http"}, {name: "worker", logs: "worker"}}
}

// ManifestFiles is the content of the demo's manifest repository, by
// path (deployplan's render benchmark renders it).
func ManifestFiles() map[string]string { return manifestFiles() }

// manifestFiles is the repository's content at its head: dev at
// DevVersion (seedManifests' first commit has dev at DevPreviousVersion).
func manifestFiles() map[string]string {
	img := func(svc string) string { return manifestRegistry + svc + ":" + ImageTag }
	files := map[string]string{
		"README.md": "# inventory manifests (deploy-web demo)\n\n" +
			"`base/` declares the Apps (hanzo.ai/v1 App) and the suspended template Job `db-migrate`;\n" +
			"`overlays/dev` deploys them to namespace `staging`, `overlays/staging` to `preprod`, `overlays/prod` to `production`,\n" +
			"each at a release (kustomize's `images` field; `app-image.yaml` maps it onto an App's `spec/image`).\n" +
			"The App `web` comes from the Helm chart `charts/web` (vendored here, rendered by deploy-web in-process): each overlay's\n" +
			"`helmCharts` entry renders it with the overlay's `web-values.yaml`, whose `image.tag` is web's release there.\n" +
			"`artifacts/catalog.json`, `artifacts/catalog-staging.json` and `artifacts/catalog-prod.json` are dev's, staging's and prod's\n" +
			"artifact catalogs, in version mode: a tag and digest per service at each release the environment runs\n" +
			"(a promotion adds the release it brings in, copied from the catalog of the environment before).\n",
		"base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
			"labels:\n  - pairs: {team: inventory}\n" +
			"resources:\n  - api.yaml\n  - worker.yaml\n  - db-migrate.yaml\n",
		"base/api.yaml": "apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n" +
			"  image: " + img("api") + "\n  replicas: 2\n  port: 8080\n" +
			"  env:\n    - {name: LOG_LEVEL, value: info}\n",
		"base/worker.yaml": "apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: worker\nspec:\n" +
			"  image: " + img("worker") + "\n  replicas: 2\n" +
			"  env:\n    - {name: QUEUE, value: inventory-events}\n",
		// A template Job: kept suspended, replaced (deleted and re-created)
		// by an apply when its image changes; it ships in the api image.
		"base/db-migrate.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: db-migrate\nspec:\n  suspend: true\n" +
			"  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n" +
			"        - name: migrate\n          image: " + img("api") + "\n          args: [migrate, up]\n",
		// staging runs the release StagingVersion, prod ProdVersion with
		// 4 api replicas; each catalog lists its own release: a promotion
		// adds the release it brings in, copied from the catalog of the
		// environment before (docs/promotion.md).
		"overlays/staging/kustomization.yaml": releaseOverlay(PreprodNamespace, StagingVersion, ""),
		"overlays/staging/app-image.yaml":     appImageConfig,
		"overlays/staging/web-values.yaml":    chartValues(StagingEnvironment, StagingVersion),
		"overlays/prod/kustomization.yaml": releaseOverlay(ProductionNamespace, ProdVersion,
			"patches:\n  - target: {group: hanzo.ai, kind: App, name: api}\n    patch: |\n      - {op: replace, path: /spec/replicas, value: 4}\n"),
		"overlays/prod/app-image.yaml":    appImageConfig,
		"overlays/prod/web-values.yaml":   chartValues(ProdEnvironment, ProdVersion),
		"overlays/dev/app-image.yaml":     appImageConfig,
		"artifacts/catalog-staging.json":  releaseCatalog(StagingVersion),
		"artifacts/catalog-prod.json":     releaseCatalog(ProdVersion),
		"charts/web/Chart.yaml":           "apiVersion: v2\nname: web\ndescription: the inventory web front end (a chart vendored in the repository)\nversion: 0.3.0\nappVersion: \"" + DevVersion + "\"\n",
		"charts/web/.helmignore":          "# not part of the chart when it renders\nREADME.md\n*.bak\n",
		"charts/web/README.md":            "# web\n\nThe web front end's chart. Each environment sets `image.tag` in `overlays/<env>/web-values.yaml`.\n",
		"charts/web/values.yaml":          chartDefaults,
		"charts/web/templates/app.yaml":   chartAppTemplate,
		"charts/web/templates/_names.tpl": "{{- define \"web.labels\" -}}\napp.kubernetes.io/name: {{ .Chart.Name }}\nhelm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}\n{{- end -}}\n",
	}
	maps.Copy(files, devRelease(DevVersion, DevPreviousVersion, DevVersion))
	return files
}

// chartDefaults is charts/web/values.yaml: every environment's defaults
// (an environment's web-values.yaml sets its release's image.tag).
const chartDefaults = "# Defaults of every environment; overlays/<env>/web-values.yaml sets the release.\n" +
	"image:\n  repository: " + manifestRegistry + ChartApp + "\n  tag: latest\nreplicas: 1\nport: 8080\n"

// chartAppTemplate renders the chart's App.
const chartAppTemplate = "apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n" +
	"    {{- include \"web.labels\" . | nindent 4 }}\nspec:\n" +
	"  image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n" +
	"  replicas: {{ .Values.replicas }}\n  port: {{ .Values.port }}\n"

// chartValues is overlays/<env>/web-values.yaml: the environment's
// release of the chart App.
func chartValues(env, version string) string {
	return "# " + env + "'s values of charts/web: a promotion or a rollback of web edits image.tag here.\nimage:\n  tag: \"" + version + "\"\n"
}

// chartOverlay is the helmCharts entry every overlay closes with: the
// chart App rendered from charts/web with the overlay's values file.
const chartOverlay = "helmGlobals: {chartHome: ../../charts}\nhelmCharts:\n  - name: " + ChartApp + "\n    releaseName: " + ChartApp + "\n    valuesFile: web-values.yaml\n"

// appImageConfig is every overlay's app-image.yaml: kustomize's images
// field also sets an App's spec/image.
const appImageConfig = "# kustomize's images field also sets an App's spec/image.\nimages:\n  - {path: spec/image, kind: App}\n"

// releaseOverlay is a release overlay deploying base/ into ns: the Apps'
// images (through app-image.yaml) and the Job's at version, the field a
// promotion or a rollback edits (docs/promotion.md, docs/gitops.md);
// extra closes it.
func releaseOverlay(ns, version, extra string) string {
	var b strings.Builder
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
	fmt.Fprintf(&b, "namespace: %s\nresources:\n  - ../../base\nconfigurations:\n  - app-image.yaml\nimages:\n", ns)
	for _, s := range EnvironmentApps() {
		fmt.Fprintf(&b, "  - {name: %s, newTag: %q}\n", manifestRegistry+s, version)
	}
	return b.String() + chartOverlay + extra
}

// releaseDigest is the (made-up) digest of service svc at version.
func releaseDigest(svc, version string) string {
	sum := sha256.Sum256([]byte("deploy-web demo " + svc + " " + version + " " + AppCommit))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// releaseCatalog is a version-mode catalog listing each service at every
// release of listed (one entry each, with its digest), the chart App
// among them; the commit, AppCommit, is only reported.
func releaseCatalog(listed ...string) string {
	type release struct {
		ID        string `json:"id"`
		Image     string `json:"image"`
		Tag       string `json:"tag"`
		Digest    string `json:"digest"`
		Published bool   `json:"published"`
	}
	cat := struct {
		Mode     string    `json:"mode"`
		Commit   string    `json:"commit"`
		Services []release `json:"services"`
	}{Mode: "version", Commit: AppCommit}
	for _, s := range CatalogApps() {
		for _, v := range listed {
			cat.Services = append(cat.Services, release{ID: s + "-" + v, Image: manifestRegistry + s, Tag: v, Digest: releaseDigest(s, v), Published: true})
		}
	}
	b, err := json.MarshalIndent(cat, "", "  ")
	if err != nil {
		panic(err) // static data
	}
	return string(b) + "\n"
}

// devRelease is dev's overlay and catalog when dev runs version: the
// overlay's images field sets every container's tag and, through
// app-image.yaml, the Apps' spec.image; the catalog lists the releases
// of listed.
func devRelease(version string, listed ...string) map[string]string {
	return map[string]string{
		"overlays/dev/kustomization.yaml": releaseOverlay(StagingNamespace, version, ""),
		"overlays/dev/web-values.yaml":    chartValues(DevEnvironment, version),
		"artifacts/catalog.json":          releaseCatalog(listed...),
	}
}

// seedManifests creates the manifest repository in dir/manifests (one
// commit on ManifestBranch, dev at DevPreviousVersion: releaseDev commits
// the next release) and writes dir/environments.yaml for it. The
// environments reach the demo cluster through kubeconfig (context
// "devcluster"); promURL, when not "", is the demo's Prometheus, every
// environment's metrics, and staging gets its promotion checks
// (environmentsYAML). It returns the environments file, the repository and
// prod's seed file (dir/prod-seed.yaml, prodSeedYAML: releaseDev applies
// prod's first commit with it, then removes it).
func seedManifests(dir, kubeconfig, promURL string) (envFile, repoDir, prodSeed string, err error) {
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", "", fmt.Errorf("demo: %w", err)
	}
	if kubeconfig, err = filepath.Abs(kubeconfig); err != nil {
		return "", "", "", fmt.Errorf("demo: %w", err)
	}
	repoDir = filepath.Join(dir, manifestRepoDir)
	if err := os.RemoveAll(repoDir); err != nil { // a reused --dir starts over
		return "", "", "", fmt.Errorf("demo: %w", err)
	}
	repo, err := git.PlainInitWithOptions(repoDir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(ManifestBranch)},
	})
	if err != nil {
		return "", "", "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	// The first commit: dev at its previous release (releaseDev applies
	// it, then commits DevVersion).
	files := manifestFiles()
	maps.Copy(files, devRelease(DevPreviousVersion, DevPreviousVersion))
	if err := commitFiles(repo, files, "inventory: api and worker (dev at "+DevPreviousVersion+", staging at "+StagingVersion+", prod at "+ProdVersion+"), db-migrate template Job"); err != nil {
		return "", "", "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	bareDir := filepath.Join(dir, manifestBareDir)
	if err := publishBare(repo, bareDir); err != nil {
		return "", "", "", fmt.Errorf("demo: manifest repository: %w", err)
	}

	envFile = filepath.Join(dir, EnvironmentsFileName)
	if err := os.WriteFile(envFile, []byte(environmentsYAML("file://"+bareDir, kubeconfig, promURL)), 0o600); err != nil {
		return "", "", "", fmt.Errorf("demo: %w", err)
	}
	prodSeed = filepath.Join(dir, prodSeedFileName)
	if err := os.WriteFile(prodSeed, []byte(prodSeedYAML("file://"+bareDir, kubeconfig)), 0o600); err != nil {
		return "", "", "", fmt.Errorf("demo: %w", err)
	}
	return envFile, repoDir, prodSeed, nil
}

// publishBare makes bareDir a bare repository holding repo's objects and
// its ManifestBranch, and makes it repo's origin (ManifestBranch tracking
// origin's), so a person commits in repo and pushes there, where the
// console reads and pushes too. It copies the objects in process: no git
// program runs.
func publishBare(repo *git.Repository, bareDir string) error {
	if err := os.RemoveAll(bareDir); err != nil { // a reused --dir starts over
		return err
	}
	bare, err := git.PlainInitWithOptions(bareDir, &git.PlainInitOptions{Bare: true,
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(ManifestBranch)}})
	if err != nil {
		return err
	}
	head, err := copyBranch(repo, bare)
	if err != nil {
		return err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{bareDir}}); err != nil {
		return err
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", ManifestBranch), head)); err != nil {
		return err
	}
	return repo.CreateBranch(&config.Branch{Name: ManifestBranch, Remote: "origin", Merge: plumbing.NewBranchReferenceName(ManifestBranch)})
}

// commitFiles writes files (path: content) into repo's worktree and
// commits them on its current branch as the demo.
func commitFiles(repo *git.Repository, files map[string]string, msg string) error {
	wt, err := repo.Worktree()
	if err != nil {
		return err
	}
	for p, content := range files {
		full := filepath.Join(wt.Filesystem.Root(), filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := wt.AddGlob("."); err != nil {
		return err
	}
	sig := &object.Signature{Name: "deploy-web demo", Email: "demo@deploy-web.invalid", When: time.Now()}
	_, err = wt.Commit(msg, &git.CommitOptions{Author: sig})
	return err
}

// copyBranch copies from's objects into to and points to's
// ManifestBranch at from's head, which it returns: a push done in
// process (no git program runs).
func copyBranch(from, to *git.Repository) (plumbing.Hash, error) {
	objs, err := from.Storer.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := objs.ForEach(func(o plumbing.EncodedObject) error {
		_, err := to.Storer.SetEncodedObject(o)
		return err
	}); err != nil {
		return plumbing.ZeroHash, err
	}
	head, err := from.Head()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return head.Hash(), to.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(ManifestBranch), head.Hash()))
}

// CommitExample is a one-line commit a person runs in the working clone
// cloneDir to change the dev environment through git: auto-sync applies
// it within its interval.
func CommitExample(cloneDir string) string {
	return fmt.Sprintf("cd %s && git pull -q && sed -i 's/replicas: 2/replicas: 3/' base/worker.yaml && git commit -qam 'worker: 3 replicas' && git push -q", cloneDir)
}

// devGitOpsYAML closes the dev environment's entry: write-back, so a
// rollback from the console is a commit on main, and auto-sync with
// self-heal, so a commit to main goes live and a field changed by hand is
// put back.
const devGitOpsYAML = `    # GitOps: a rollback from the console commits to main (writeBack,
    # push); a commit pushed to main goes live within 15s (autoSync); a
    # field of a rendered object changed by hand is put back 30s later
    # (selfHeal). See docs/gitops.md.
    writeBack: {mode: push}
    autoSync: {enabled: true, selfHeal: true, interval: 15s, grace: 30s}
`

// stagingGitOpsYAML closes the staging environment's entry: promoted
// from dev (a promotion is a commit on main, write-back push) and
// auto-synced, so it runs its overlay from the demo's start and a
// promotion goes live; with checks, the promotion also needs the
// error-rate check (ErrorRateQuery) to hold against dev's metrics.
func stagingGitOpsYAML(checks bool) string {
	s := `    # Promoted from dev (docs/promotion.md): a promotion commits dev's
    # versions into overlays/staging on main (writeBack, push), and
    # auto-sync applies it; the soak is short for the demo (default 10m).
    writeBack: {mode: push}
    autoSync: {enabled: true, interval: 15s}
`
	if !checks {
		return s + "    promotion: {after: " + DevEnvironment + ", soak: " + PromotionSoak + "}\n"
	}
	return s + "    promotion:\n      after: " + DevEnvironment + "\n      soak: " + PromotionSoak + "\n" +
		`      # The promotion checks (docs/promotion.md, "Checks"), run against
      # dev's metrics: the share of the App's requests at its version
      # answered with a 5xx, at every sample since the version went live
      # in dev (10m at most). Dev's worker ` + DevVersion + ` answers 8% errors, so
      # its promotion fails this check; api's passes.
      checks:
        - name: ` + ErrorRateCheck + `
          query: '` + ErrorRateQuery + `'
          threshold: {max: ` + strconv.FormatFloat(ErrorRateMax, 'g', -1, 64) + `}
          for: 10m
`
}

// ErrorRateQuery is the demo's error-rate check: the share of an App's
// requests at its version in the source environment answered with a 5xx
// over the last minute (TrafficMetric, the traffic source's counter).
const ErrorRateQuery = `sum(rate(` + TrafficMetric + `{app="{{app}}",environment="{{environment}}",version="{{version}}",code=~"5.."}[1m]))` +
	` / sum(rate(` + TrafficMetric + `{app="{{app}}",environment="{{environment}}",version="{{version}}"}[1m]))`

// metricsYAML is every environment's metrics: the demo's Prometheus at
// promURL ("" when it runs none: no metrics).
func metricsYAML(promURL string) string {
	if promURL == "" {
		return ""
	}
	return "    # The demo's Prometheus on loopback, scraping its traffic source\n" +
		"    # (docs/promotion.md, \"Checks\"; plain http only to loopback).\n" +
		"    metrics: {url: " + strconv.Quote(promURL) + "}\n"
}

// prodGitOpsYAML closes the prod environment's entry: promoted from
// staging; protected, so a promotion is a request another approver
// approves, written as a review branch (writeBack, branch).
var prodGitOpsYAML = `    # Promoted from staging: protected, so a promotion is a request that
    # another approver approves, then a review branch (writeBack, branch);
    # main is never written.
    writeBack: {mode: branch}
    promotion: {after: ` + StagingEnvironment + `, soak: ` + PromotionSoak + `}
`

// environmentsYAML is the demo's deploy config (the format of
// docs/plan-and-apply.md); promURL, when not "", is the demo's
// Prometheus: every environment's metrics, and staging's promotion has
// the error-rate check.
func environmentsYAML(repoURL, kubeconfig, promURL string) string {
	m := metricsYAML(promURL)
	return strings.Join([]string{
		"# deploy-web demo environments (written by `deploy-web demo`).\nenvironments:\n",
		environmentYAML(repoURL, kubeconfig, DevEnvironment, StagingNamespace, false, "overlays/dev", "artifacts/catalog.json", "dev: plan and apply from the console (/environments/dev)") + m + devGitOpsYAML,
		environmentYAML(repoURL, kubeconfig, StagingEnvironment, PreprodNamespace, false, "overlays/staging", "artifacts/catalog-staging.json", "staging: release "+StagingVersion+" (a version-mode catalog), one step behind dev") + m + stagingGitOpsYAML(promURL != ""),
		prodYAML(repoURL, kubeconfig, true) + m + prodGitOpsYAML,
	}, "")
}

// prodYAML is prod's entry of the environments file (protected), or of
// the one-time seed file that installs its first commit (prodSeedYAML).
func prodYAML(repoURL, kubeconfig string, protected bool) string {
	return environmentYAML(repoURL, kubeconfig, ProdEnvironment, ProductionNamespace, protected, "overlays/prod", "artifacts/catalog-prod.json",
		"prod: release "+ProdVersion+" (a version-mode catalog); protected, so the plan is shown but every apply is refused")
}

// prodSeedYAML is the deploy config of the demo's start alone: prod as
// in the environments file but not protected, so the engine applies its
// first commit once (releaseDev), as prod's first install did before the
// console ran it. The console never reads it.
func prodSeedYAML(repoURL, kubeconfig string) string {
	return "# deploy-web demo: prod's first install (written and removed by `deploy-web demo`).\nenvironments:\n" + prodYAML(repoURL, kubeconfig, false)
}

// environmentYAML is one environment's entry of the demo's deploy config
// (its GitOps lines aside).
func environmentYAML(repoURL, kubeconfig, name, ns string, protected bool, path, catalog, comment string) string {
	return fmt.Sprintf(`  # %s
  - name: %s
    cluster: {context: devcluster, kubeconfig: %q}
    namespace: %s
    protected: %t
    source: {repo: %q, ref: %s, path: %s}
    catalog: %s
    templateJobs: {allowlist: [db-migrate]}
    # registry.demo.local does not exist, so registry.hosts lists no
    # registry: none is contacted, and each plan warns that the digests
    # at registry.demo.local are not proven. A real environment lists the
    # registries it trusts: registry: {hosts: [ghcr.io, index.docker.io]}.
    registry: {hosts: []}
`, comment, name, kubeconfig, ns, protected, repoURL, ManifestBranch, path, catalog)
}
