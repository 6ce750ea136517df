package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/demo/demoapply"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/kubeview"
)

// TestManifestsOffline seeds the manifest repository without a cluster and
// checks the environments file loads, the three overlays render from git,
// and the offline source plan converges (tags, catalog, digests).
func TestManifestsOffline(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "cluster", "kubeconfig")
	envFile, repoDir, prodSeed, err := seedManifests(dir, kc, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := envconfig.LoadConfig(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Environments) != 3 {
		t.Fatalf("%d environments, want dev, staging and prod", len(cfg.Environments))
	}
	// prod's seed file is prod unprotected, nothing else changed: what
	// the demo's start applies once.
	seed, err := envconfig.LoadConfig(prodSeed)
	if err != nil {
		t.Fatalf("prod's seed file: %v", err)
	}
	if p := cfg.Environments[2]; len(seed.Environments) != 1 || seed.Environments[0].Name != ProdEnvironment || seed.Environments[0].Protected ||
		seed.Environments[0].Namespace != p.Namespace || seed.Environments[0].Source != p.Source || seed.Environments[0].Catalog != p.Catalog ||
		seed.Environments[0].Cluster != p.Cluster {
		t.Errorf("prod's seed file holds %+v, want prod (%+v) alone, unprotected", seed.Environments, p)
	}
	dev, staging, prod := cfg.Environments[0], cfg.Environments[1], cfg.Environments[2]
	for _, c := range []struct {
		env       envconfig.Environment
		name, ns  string
		protected bool
		path      string
	}{
		{dev, DevEnvironment, StagingNamespace, false, "overlays/dev"},
		{staging, StagingEnvironment, PreprodNamespace, false, "overlays/staging"},
		{prod, ProdEnvironment, ProductionNamespace, true, "overlays/prod"},
	} {
		e := c.env
		if e.Name != c.name || e.Namespace != c.ns || e.Protected != c.protected || e.Source.Repo != "file://"+filepath.Join(dir, manifestBareDir) ||
			e.Source.Ref != ManifestBranch || e.Source.Path != c.path || !e.Allowlisted("db-migrate") || e.Registry.Skip || len(e.Registry.Hosts) != 0 ||
			e.Cluster.Context != "devcluster" || e.Cluster.Kubeconfig != kc {
			t.Errorf("environment %s = %+v", c.name, e)
		}
		// Every catalog is in version mode (its commit reported): dev at
		// its first commit runs DevPreviousVersion, staging StagingVersion,
		// prod ProdVersion; every image carries its release's tag.
		tag := DevPreviousVersion
		switch e.Name {
		case StagingEnvironment:
			tag = StagingVersion
		case ProdEnvironment:
			tag = ProdVersion
		}
		checkSourcePlan(t, &e, tag)
	}
	// dev is the GitOps loop: write-back (push) and auto-sync with
	// self-heal; staging follows its branch too and is promoted from dev;
	// prod, protected, is promoted from staging through a review branch
	// and never auto-syncs.
	if wb, as := dev.WriteBack, dev.AutoSync; wb == nil || wb.Mode != "push" || as == nil || !as.Enabled || !as.SelfHeal.PrunesFields() || as.IntervalOrDefault() != 15*time.Second {
		t.Errorf("dev writeBack %+v autoSync %+v, want push and auto-sync with self-heal every 15s", wb, as)
	}
	if dev.Promotion != nil {
		t.Errorf("dev promotion %+v, want none: dev starts the chain", dev.Promotion)
	}
	if wb, as := staging.WriteBack, staging.AutoSync; wb == nil || wb.Mode != "push" || as == nil || !as.Enabled || as.IntervalOrDefault() != 15*time.Second {
		t.Errorf("staging writeBack %+v autoSync %+v, want push and auto-sync every 15s", wb, as)
	}
	if wb := prod.WriteBack; wb == nil || wb.Mode != "branch" || prod.AutoSync != nil {
		t.Errorf("prod writeBack %+v autoSync %+v, want a review branch and no auto-sync", wb, prod.AutoSync)
	}
	for _, c := range []struct {
		env   envconfig.Environment
		after string
	}{{staging, DevEnvironment}, {prod, StagingEnvironment}} {
		if p := c.env.Promotion; p == nil || p.After != c.after || p.SoakOrDefault().String() != PromotionSoak {
			t.Errorf("%s promotion %+v, want after %s, soak %s", c.env.Name, p, c.after, PromotionSoak)
		}
	}
	if order := cfg.PromotionOrder(); strings.Join(order, ",") != "dev,staging,prod" {
		t.Errorf("PromotionOrder() = %v, want dev, staging, prod", order)
	}
	// The working clone's origin is the bare repository, at the same
	// commit, so a person's push reaches what dev reads.
	clone, err := git.PlainOpen(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := git.PlainOpen(filepath.Join(dir, manifestBareDir))
	if err != nil {
		t.Fatal(err)
	}
	origin, err := clone.Remote("origin")
	if err != nil || origin.Config().URLs[0] != filepath.Join(dir, manifestBareDir) {
		t.Errorf("the clone's origin = %v, %v; want the bare repository", origin, err)
	}
	ch, _ := clone.Head()
	bh, err := bare.Reference(plumbing.NewBranchReferenceName(ManifestBranch), true)
	if err != nil || ch == nil || bh.Hash() != ch.Hash() {
		t.Errorf("bare %s = %v (%v), want the clone's HEAD %v", ManifestBranch, bh, err, ch)
	}
	if ex := CommitExample(repoDir); !strings.Contains(ex, repoDir) || !strings.Contains(ex, "git push") {
		t.Errorf("CommitExample = %q, want a commit and push in the clone", ex)
	}
	if !strings.HasPrefix(AppCommit, ImageTag) || len(ImageTag) < 7 {
		t.Errorf("ImageTag %q is not a prefix of AppCommit", ImageTag)
	}

	// The git desired source sees the same objects.
	ix := envsource.New(cfg, nil, time.Hour)
	for _, e := range []string{DevEnvironment, StagingEnvironment, ProdEnvironment} {
		if err := ix.Refresh(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	d, ok := ix.Lookup(appcr.GroupVersion.Group, appcr.Kind.Kind, StagingNamespace, "api")
	if !ok || d.Environment != DevEnvironment || d.Path != "overlays/dev" || d.Ref != ManifestBranch || d.Commit == "" {
		t.Errorf("Lookup(staging/api) = %v %+v", ok, d)
	}
	d, ok = ix.Lookup(appcr.GroupVersion.Group, appcr.Kind.Kind, PreprodNamespace, "api")
	if img, _, _ := unstructuredString(d, "spec", "image"); !ok || d.Environment != StagingEnvironment || img != manifestRegistry+"api:"+StagingVersion {
		t.Errorf("Lookup(preprod/api) = %v %+v (image %q), want staging's at %s", ok, d, img, StagingVersion)
	}
	// The chart App: rendered from charts/web with each overlay's values
	// file, in the overlay's namespace.
	for _, c := range []struct{ ns, env, version string }{
		{StagingNamespace, DevEnvironment, DevPreviousVersion}, {PreprodNamespace, StagingEnvironment, StagingVersion}, {ProductionNamespace, ProdEnvironment, ProdVersion},
	} {
		d, ok := ix.Lookup(appcr.GroupVersion.Group, appcr.Kind.Kind, c.ns, ChartApp)
		if img, _, _ := unstructuredString(d, "spec", "image"); !ok || d.Environment != c.env || img != manifestRegistry+ChartApp+":"+c.version {
			t.Errorf("Lookup(%s/%s) = %v %+v (image %q), want %s's at %s", c.ns, ChartApp, ok, d, img, c.env, c.version)
		}
	}
	d, ok = ix.Lookup(appcr.GroupVersion.Group, appcr.Kind.Kind, ProductionNamespace, "api")
	if r, _, _ := unstructuredInt(d, "spec", "replicas"); !ok || d.Environment != ProdEnvironment || r != 4 {
		t.Errorf("Lookup(production/api) = %v %+v (replicas %d), want prod's, 4 replicas", ok, d, r)
	}

	// dev's release commit (releaseDev commits it once the first one is
	// applied): dev runs DevVersion, its catalog lists both releases, so
	// a rollback to DevPreviousVersion is admitted.
	head, err := commitDevRelease(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	if bh, err := bare.Reference(plumbing.NewBranchReferenceName(ManifestBranch), true); err != nil || bh.Hash().String() != head {
		t.Errorf("bare %s after the release = %v (%v), want %s", ManifestBranch, bh, err, head)
	}
	if oh, err := clone.Reference(plumbing.NewRemoteReferenceName("origin", ManifestBranch), true); err != nil || oh.Hash().String() != head {
		t.Errorf("the clone's origin/%s after the release = %v (%v), want %s", ManifestBranch, oh, err, head)
	}
	checkSourcePlan(t, &dev, DevVersion)
	// Each catalog lists its environment's release, dev's its rollback
	// target too; a promotion copies the release it brings in from the
	// catalog before (dev's lists DevVersion, staging's StagingVersion).
	for _, c := range []struct {
		file     string
		releases []string
	}{
		{"artifacts/catalog.json", []string{DevPreviousVersion, DevVersion}},
		{"artifacts/catalog-staging.json", []string{StagingVersion}},
		{"artifacts/catalog-prod.json", []string{ProdVersion}},
	} {
		cat, err := deployplan.ParseCatalog([]byte(ManifestFiles()[c.file]))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		var got []string
		for _, s := range cat.Services {
			got = append(got, s.ID)
		}
		var want []string
		for _, app := range CatalogApps() {
			for _, v := range c.releases {
				want = append(want, app+"-"+v)
				if s, ok := cat.Lookup(deployplan.Image{Repository: manifestRegistry + app, Tag: v}); !ok || s.Tag != v {
					t.Errorf("%s: Lookup(%s:%s) = %+v, %v; want the release listed", c.file, app, v, s, ok)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s lists %v, want %v", c.file, got, want)
		}
	}

	// Seeding again (a reused --dir) starts the repository over.
	if _, _, _, err := seedManifests(dir, kc, ""); err != nil {
		t.Fatalf("second seedManifests = %v", err)
	}
	if _, err := os.Stat(filepath.Join(repoDir, ".git")); err != nil {
		t.Fatal(err)
	}
}

// checkSourcePlan plans e's source offline: it converges, its catalog is
// in version mode with commit AppCommit, and every workload image is
// tagged tag (the chart App's by its values file).
func checkSourcePlan(t *testing.T, e *envconfig.Environment, tag string) {
	t.Helper()
	res, err := deployplan.SourcePlan(context.Background(), e, deployplan.Options{})
	if err != nil {
		t.Fatalf("SourcePlan(%s) = %v", e.Name, err)
	}
	if len(res.Divergences) != 0 || res.CatalogCommit != AppCommit || res.SourceCommit == "" || res.CatalogMode != deployplan.CatalogModeVersion {
		t.Errorf("SourcePlan(%s): divergences %+v, catalog %q in mode %s, source commit %q; want none, %q in version mode", e.Name, res.Divergences, res.CatalogCommit, res.CatalogMode, res.SourceCommit, AppCommit)
	}
	var got []string
	for _, w := range res.Workloads {
		got = append(got, w.Kind+"/"+w.Name)
		for _, ct := range w.Containers {
			if !strings.HasSuffix(ct.Image, ":"+tag) {
				t.Errorf("%s: %s/%s runs %s, want tag %s", e.Name, w.Kind, w.Name, ct.Image, tag)
			}
		}
	}
	slices.Sort(got)
	if want := []string{"App/api", "App/web", "App/worker", "Job/db-migrate"}; !slices.Equal(got, want) {
		t.Errorf("%s workloads = %v, want %v", e.Name, got, want)
	}
}

func unstructuredString(d envsource.Desired, path ...string) (string, bool, error) {
	if d.Object == nil {
		return "", false, nil
	}
	v, ok := d.Object.Object[path[0]].(map[string]any)[path[1]].(string)
	return v, ok, nil
}

func unstructuredInt(d envsource.Desired, path ...string) (int64, bool, error) {
	if d.Object == nil {
		return 0, false, nil
	}
	v, ok := d.Object.Object[path[0]].(map[string]any)[path[1]].(int64)
	return v, ok, nil
}

// TestEnvironments plans dev and prod against the demo cluster: dev is
// ready, prod (its first commit installed by Start) gets a report, and an
// apply of prod is refused with nothing touched. Then it walks docs/demo.md's deploy walkthrough: apply dev, the Apps converge in
// staging (a platform namespace, so the fleet shows them), and a second
// plan of dev changes nothing.
func TestEnvironments(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the control plane and the IdP")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	env, err := Start(ctx, Options{CallbackURL: "http://127.0.0.1:1/auth/callback", Dir: t.TempDir(), ApplyEnvironment: demoapply.Apply})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	// Each environment's namespace is a platform namespace: the matrix
	// reads all three and a promotion may target prod.
	for _, ns := range []string{StagingNamespace, PreprodNamespace, ProductionNamespace} {
		if !slices.Contains(env.Namespaces, ns) {
			t.Errorf("platform namespaces %v: want %s among them", env.Namespaces, ns)
		}
	}
	cs := kubernetes.NewForConfigOrDie(env.Cluster.Config)
	for _, ns := range []string{StagingNamespace, PreprodNamespace, ProductionNamespace, env.HistoryNamespace} {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}
	if env.HistoryNamespace != HistoryNamespace {
		t.Errorf("HistoryNamespace = %q", env.HistoryNamespace)
	}
	cfg, err := envconfig.LoadConfig(env.EnvironmentsFile)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := cfg.Env(DevEnvironment)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := cfg.Env(ProdEnvironment)
	if err != nil {
		t.Fatal(err)
	}
	reports := t.TempDir()

	// dev: ready. The environment reaches the cluster through its own
	// kubeconfig context, as the console's plan will.
	rep, err := deployplan.Plan(ctx, dev, deployplan.Options{ReportPath: filepath.Join(reports, "dev.json")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status() != deployplan.StatusReady {
		t.Fatalf("dev plan is %s:\n%s", rep.Status(), rep.Markdown())
	}
	d := rep.DeployApply
	// Start applied dev's first release and committed the next: the plan
	// moves the workloads to DevVersion.
	if d.Target.Namespace != StagingNamespace || d.ArtifactPlan.CatalogMode != deployplan.CatalogModeVersion || d.ArtifactPlan.DeployCommit != DevVersion {
		t.Errorf("dev plan target %+v artifacts %+v", d.Target, d.ArtifactPlan)
	}
	var actions []string
	for _, w := range d.WorkloadPlan {
		actions = append(actions, w.Kind+"/"+w.Name+"="+w.Action)
	}
	slices.Sort(actions)
	if want := []string{"App/api=update", "App/web=update", "App/worker=update", "Job/db-migrate=replace"}; !slices.Equal(actions, want) {
		t.Errorf("dev workload plan = %v, want %v", actions, want)
	}
	if errs := deployplan.ValidateReport(mustJSON(t, rep)); len(errs) > 0 {
		t.Errorf("dev report breaks the contract: %v", errs)
	}

	// prod: a report, whatever its conclusion; an apply is refused.
	rep, err = deployplan.Plan(ctx, prod, deployplan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Status(); s != deployplan.StatusReady && s != deployplan.StatusBlocked {
		t.Fatalf("prod plan status %q", s)
	}
	if !rep.DeployApply.Target.Protected || rep.DeployApply.Target.Namespace != ProductionNamespace {
		t.Errorf("prod target = %+v", rep.DeployApply.Target)
	}
	_, err = deployplan.Apply(ctx, prod, deployplan.ApplyOptions{
		ReportPath: filepath.Join(reports, "prod.json"),
		Request:    deployplan.ApplyRequest{Env: ProdEnvironment, ConfirmEnv: ProdEnvironment, ConfirmedNonProduction: true},
	})
	var refusal *deployplan.RefusalError
	if !errors.As(err, &refusal) || !strings.Contains(refusal.Reason, "protected") {
		t.Fatalf("Apply(prod) = %v, want a refusal naming the protection", err)
	}
	// Start installed prod's first commit (release ProdVersion, 4 api
	// replicas); the refused apply changed nothing of it.
	dyn := dynamic.NewForConfigOrDie(env.Cluster.Config)
	for _, app := range EnvironmentApps() {
		u, err := dyn.Resource(appcr.Resource).Namespace(ProductionNamespace).Get(ctx, app, metav1.GetOptions{})
		if img, _, _ := unstructured.NestedString(u.UnstructuredContent(), "spec", "image"); err != nil || img != manifestRegistry+app+":"+ProdVersion {
			t.Errorf("production/%s after the refused apply: image %q, %v; want prod's first commit, release %s", app, img, err, ProdVersion)
		}
	}
	if u, err := dyn.Resource(appcr.Resource).Namespace(ProductionNamespace).Get(ctx, "api", metav1.GetOptions{}); err == nil {
		if r, _, _ := unstructured.NestedInt64(u.UnstructuredContent(), "spec", "replicas"); r != 4 {
			t.Errorf("production/api replicas = %d, want prod's overlay's 4", r)
		}
	}
	if job, err := cs.BatchV1().Jobs(ProductionNamespace).Get(ctx, "db-migrate", metav1.GetOptions{}); err != nil || job.Spec.Suspend == nil || !*job.Spec.Suspend {
		t.Errorf("production/db-migrate = %v, %v; want prod's suspended template Job", job, err)
	}
	// The seed file is gone: only the environments file names prod.
	if _, err := os.Stat(filepath.Join(env.Dir, prodSeedFileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("prod's seed file after the start: %v, want removed", err)
	}
	// staging still runs dev's first release: planning wrote nothing.
	for _, app := range EnvironmentApps() {
		u, err := dyn.Resource(appcr.Resource).Namespace(StagingNamespace).Get(ctx, app, metav1.GetOptions{})
		if img, _, _ := unstructured.NestedString(u.UnstructuredContent(), "spec", "image"); err != nil || img != manifestRegistry+app+":"+DevPreviousVersion {
			t.Fatalf("staging/%s after the plans: image %q, %v; want release %s", app, img, err, DevPreviousVersion)
		}
	}

	// docs/demo.md's walkthrough: apply dev; the operator reconciles the Apps
	// in staging and the fleet shows them Healthy and Synced.
	rep, err = deployplan.Apply(ctx, dev, deployplan.ApplyOptions{
		ReportPath: filepath.Join(reports, "dev-apply.json"), Timeout: 2 * time.Minute,
		Request: deployplan.ApplyRequest{Env: DevEnvironment, ConfirmEnv: DevEnvironment, ConfirmedNonProduction: true},
	})
	if err != nil {
		t.Fatalf("Apply(dev) = %v", err)
	}
	if rep.Status() != deployplan.StatusApplied {
		t.Fatalf("Apply(dev) ended %s:\n%s", rep.Status(), rep.Markdown())
	}
	view, err := kubeview.New(cs, dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: env.Namespaces})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	if err := view.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		page, err := view.Applications(kubeview.Query{Namespace: StagingNamespace})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range page.Rows {
			got = append(got, fmt.Sprintf("%s %s %s %s", r.Key(), r.Health.Status, r.Sync.Status, r.RunningSummary()))
		}
		slices.Sort(got)
		want := []string{
			fmt.Sprintf("staging/api Healthy Synced %s (2)", DevVersion),
			fmt.Sprintf("staging/%s Healthy Synced %s (1)", ChartApp, DevVersion),
			fmt.Sprintf("staging/worker Healthy Synced %s (2)", DevVersion),
		}
		if slices.Equal(got, want) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("staging never converged: %q, want %q", got, want)
		case <-time.After(300 * time.Millisecond):
		}
	}
	// staging/api has run both releases: its page offers the rollback.
	if h, err := view.History(StagingNamespace, "api"); err != nil || len(h) != 2 || h[0].Version != DevVersion || h[1].Version != DevPreviousVersion || !h[1].CleanSemver {
		t.Errorf("staging/api history = %+v, %v; want %s, then %s", h, err, DevVersion, DevPreviousVersion)
	}
	job, err := cs.BatchV1().Jobs(StagingNamespace).Get(ctx, "db-migrate", metav1.GetOptions{})
	if err != nil || job.Spec.Suspend == nil || !*job.Spec.Suspend {
		t.Errorf("staging/db-migrate = %v, %v; want a suspended Job", job, err)
	}

	// Planning dev again: ready, nothing to change.
	rep, err = deployplan.Plan(ctx, dev, deployplan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status() != deployplan.StatusReady {
		t.Fatalf("dev re-plan is %s:\n%s", rep.Status(), rep.Markdown())
	}
	for _, o := range rep.DeployApply.Objects {
		if o.Action != "unchanged" {
			t.Errorf("dev re-plan: %s/%s is %s, want unchanged", o.Kind, o.Name, o.Action)
		}
	}
}

func mustJSON(t *testing.T, rep *deployplan.Report) []byte {
	t.Helper()
	b, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
