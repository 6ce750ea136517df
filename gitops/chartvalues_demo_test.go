package gitops

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/demo"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/writeback"
)

// TestDemoChartAppPromotes: the demo's chart App (charts/web, rendered by
// each overlay's helmCharts entry) promoted dev -> staging is one edit of
// staging's own values file, image.tag at dev's release, beside the copy
// of dev's catalog entry; the chart, its defaults and the other overlays
// are not written, and dev and prod render the same.
func TestDemoChartAppPromotes(t *testing.T) {
	tree := fstest.MapFS{}
	for p, s := range demo.ManifestFiles() {
		tree[p] = &fstest.MapFile{Data: []byte(s)}
	}
	cfg, err := envconfig.ParseConfig([]byte(`environments:
  - name: staging
    cluster: {context: test}
    namespace: preprod
    source: {repo: "file:///m.git", ref: main, path: overlays/staging}
    catalog: artifacts/catalog-staging.json
    writeBack: {mode: push}
  - name: dev
    cluster: {context: test}
    namespace: staging
    source: {repo: "file:///m.git", ref: main, path: overlays/dev}
    catalog: artifacts/catalog.json
  - name: prod
    cluster: {context: test}
    namespace: production
    source: {repo: "file:///m.git", ref: main, path: overlays/prod}
    catalog: artifacts/catalog-prod.json
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := &cfg.Environments[0]
	others := []*envconfig.Environment{&cfg.Environments[1], &cfg.Environments[2]}
	repo := "registry.demo.local/inventory/" + demo.ChartApp
	ch := writeback.ImageChange{Dir: env.Source.Path, Kind: "App", Name: demo.ChartApp, Repository: repo, Tag: demo.DevVersion}
	edits, err := versionEdits(context.Background(), tree, env, "hanzo.ai", ch, 0)
	if err != nil {
		t.Fatalf("versionEdits(web -> %s) = %v", demo.DevVersion, err)
	}
	if len(edits) != 1 || edits[0].Target() != "overlays/staging/web-values.yaml" {
		t.Fatalf("edits = %+v, want one of overlays/staging/web-values.yaml", edits)
	}
	// The promotion's catalog edit: dev's entry of web 1.5.0 copied into
	// staging's catalog.
	versions := []promotion.AppVersion{{App: demo.ChartApp, Image: repo + ":" + demo.DevVersion, Version: demo.DevVersion}}
	cat, err := promotionCatalogEdits(tree, env, "dev", versions, func() (*deployplan.Catalog, string, error) {
		c, err := deployplan.ParseCatalog([]byte(demo.ManifestFiles()["artifacts/catalog.json"]))
		return c, "artifacts/catalog.json", err
	})
	if err != nil || len(cat) != 1 || cat[0].Target() != "artifacts/catalog-staging.json" {
		t.Fatalf("promotionCatalogEdits = %+v, %v; want staging's catalog", cat, err)
	}
	edited := applyEdits(t, tree, append(edits, cat...))
	if err := checkCatalogAdmits(edited, env, "App", demo.ChartApp, repo+":"+demo.DevVersion); err != nil {
		t.Errorf("staging's catalog after the promotion: %v", err)
	}
	// dev and prod, from the same repository and branch, render the same.
	if err := reachError(env, renderAll(context.Background(), others, tree), renderAll(context.Background(), others, edited)); err != nil {
		t.Errorf("the promotion reaches other environments: %v", err)
	}
	if got := string(edited["overlays/staging/web-values.yaml"].Data); !strings.Contains(got, "tag: \""+demo.DevVersion+"\"") || !strings.HasPrefix(got, "# staging's values") {
		t.Errorf("staging's values file after the edit = %q, want image.tag %s and its comment", got, demo.DevVersion)
	}
	if err := checkRenderedImage(context.Background(), env, edited, "hanzo.ai", "App", demo.ChartApp, repo, demo.DevVersion); err != nil {
		t.Errorf("the edited tree: %v", err)
	}
	if err := checkRenderedObjs(env, mustRender(t, env, tree), "hanzo.ai", "App", demo.ChartApp, appcr.ImageRef{Repository: repo, Tag: demo.StagingVersion}); err != nil {
		t.Errorf("staging before the promotion: %v, want web at %s", err, demo.StagingVersion)
	}
}

func mustRender(t *testing.T, env *envconfig.Environment, tree fstest.MapFS) []*unstructured.Unstructured {
	t.Helper()
	objs, err := deployplan.RenderFS(context.Background(), env, tree)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
