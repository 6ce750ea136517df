package handlers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/catalogtest"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
)

// promoteCatalogConfig: dev -> staging (push), staging with a
// version-mode catalog in the repository, dev with its catalog at %[2]s
// (artifacts/dev.json: the repository's; an absolute path: on disk).
const promoteCatalogConfig = `
environments:
  - name: dev
    cluster: {context: test}
    namespace: dev-ns
    source: {repo: %[1]q, ref: main, path: overlays/dev}
    catalog: %[2]s
  - name: staging
    cluster: {context: test}
    namespace: staging-ns
    source: {repo: %[1]q, ref: main, path: overlays/staging}
    catalog: artifacts/staging.json
    writeBack: {mode: push}
    promotion: {after: dev}
`

// TestPromoteWritesTheCatalog: through the git binary's smart HTTP and
// the real write-back, a promotion into staging whose catalog lacks the
// release adds dev's entry (its digest) to staging's catalog in the same
// commit as the overlay; a release dev's catalog does not list either is
// refused before anything is pushed; one staging lists already leaves
// the catalog alone.
func TestPromoteWritesTheCatalog(t *testing.T) {
	tests := []struct {
		name, devCatalog, stagingCatalog string
		// onDisk: dev's catalog is a file on disk, read by a render of
		// dev, not the repository's artifacts/dev.json.
		onDisk bool
		status int
		// files are the files the commit changes; want is in the answer.
		files, want string
	}{
		{"copied from dev", catalogtest.Version("api-1.2.0=1.2.0="+catalogtest.DigestA, "api-1.5.0=1.5.0="+catalogtest.DigestB), catalogtest.Version("api=1.2.0=" + catalogtest.DigestA),
			false, 200, "artifacts/staging.json overlays/staging/kustomization.yaml", ""},
		{"copied from dev's catalog on disk", catalogtest.Version("api-1.2.0=1.2.0="+catalogtest.DigestA, "api-1.5.0=1.5.0="+catalogtest.DigestB), catalogtest.Version("api=1.2.0=" + catalogtest.DigestA),
			true, 200, "artifacts/staging.json overlays/staging/kustomization.yaml", ""},
		{"listed already", catalogtest.Version("api-1.5.0=1.5.0=" + catalogtest.DigestB), catalogtest.Version("api=1.2.0="+catalogtest.DigestA, "api-1.5.0=1.5.0="+catalogtest.DigestB),
			false, 200, "overlays/staging/kustomization.yaml", ""},
		{"dev does not list it", catalogtest.Version("api-1.2.0=1.2.0=" + catalogtest.DigestA), catalogtest.Version("api=1.2.0=" + catalogtest.DigestA),
			false, 422, "", "neither does dev's catalog"},
		{"dev's catalog on disk does not list it", catalogtest.Version("api-1.2.0=1.2.0=" + catalogtest.DigestA), catalogtest.Version("api=1.2.0=" + catalogtest.DigestA),
			true, 422, "", "neither does dev's catalog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"artifacts/staging.json": tt.stagingCatalog}
			devCatalog := "artifacts/dev.json"
			if tt.onDisk {
				// The repository's artifacts/dev.json would list nothing.
				files[devCatalog] = catalogtest.Version()
				devCatalog = filepath.Join(t.TempDir(), "dev.json")
				if err := os.WriteFile(devCatalog, []byte(tt.devCatalog), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				files[devCatalog] = tt.devCatalog
			}
			for p, f := range promoteTree() {
				if !strings.HasPrefix(p, "catalog") {
					files[p] = string(f.Data)
				}
			}
			srv := gitservertest.New(t, files, gitservertest.Options{})
			cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(promoteCatalogConfig, srv.URL, devCatalog)), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			policy, err := roles.Parse("roles.yaml", []byte(promoteRoles), roles.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rows := promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy)[:2]
			view := newFakeView(nil)
			view.namespaces = []string{"dev-ns", "staging-ns"}
			f := &promoteFixture{store: promotion.NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys()), audit: &memAudit{}}
			tl := promoteTimeline(t, rows, testNow.Add(-48*time.Hour))
			f.ts = newTestServer(t, view, func(o *Options) {
				o.Clusters = []Cluster{{Name: "in-cluster", View: &nsView{fakeView: view, rows: rows}}}
				o.Environments = hangingRunner(t, cfg)
				o.Promotions = f.store
				o.Audit = f.audit
				o.Roles = policy
				o.Timeline = tl
			})
			f.as("dee", "deployers")
			head := srv.Head("main")
			code, out, body := f.post(t, paths.APIEnvPromotions("staging"), `{"from": "dev", "app": "api"}`)
			if code != tt.status || !strings.Contains(body, tt.want) {
				t.Fatalf("POST promotions (staging) = %d %s, want %d containing %q", code, body, tt.status, tt.want)
			}
			if tt.status != 200 {
				if srv.Head("main") != head {
					t.Errorf("a refused promotion moved main")
				}
				return
			}
			if got := srv.Head("main"); got != out.Commit.SHA || gitservertest.Run(t, srv.Bare, "rev-parse", got+"^") != head {
				t.Errorf("main = %s, want the promotion's one commit %s on %s", got, out.Commit.SHA, head)
			}
			if got := strings.Join(strings.Fields(gitservertest.Run(t, srv.Bare, "diff", "--name-only", head, out.Commit.SHA)), " "); got != tt.files {
				t.Errorf("the promotion's commit changes %q, want %q", got, tt.files)
			}
			cat, err := deployplan.ParseCatalog([]byte(gitservertest.Run(t, srv.Bare, "show", "main:artifacts/staging.json")))
			if err != nil {
				t.Fatalf("staging's catalog after the promotion does not read: %v", err)
			}
			var got []string
			for _, s := range cat.Services {
				got = append(got, s.ID+" "+s.Tag+" "+s.Digest)
			}
			want := []string{"api 1.2.0 " + catalogtest.DigestA, "api-1.5.0 1.5.0 " + catalogtest.DigestB}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("staging's catalog after the promotion (-want +got):\n%s", d)
			}
		})
	}
}
