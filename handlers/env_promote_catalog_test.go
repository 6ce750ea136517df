package handlers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
)

var (
	digestA = "sha256:" + strings.Repeat("a", 64)
	digestB = "sha256:" + strings.Repeat("b", 64)
	digestC = "sha256:" + strings.Repeat("c", 64)
)

// versionCatalog is a version-mode catalog of reg.example/acme/api, laid
// out as json.MarshalIndent does, listing releases "id=tag=digest".
func versionCatalog(releases ...string) string {
	var b strings.Builder
	b.WriteString("{\n  \"mode\": \"version\",\n  \"commit\": \"0123456789abcdef0123456789abcdef01234567\",\n  \"services\": [")
	for i, r := range releases {
		f := strings.Split(r, "=")
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n    {\n      \"id\": %q,\n      \"image\": \"reg.example/acme/api\",\n      \"tag\": %q,\n      \"digest\": %q,\n      \"published\": true\n    }", f[0], f[1], f[2])
	}
	b.WriteString("\n  ]\n}\n")
	return b.String()
}

func TestCatalogAppend(t *testing.T) {
	add := []deployplan.CatalogService{{ID: "api-1.5.0", Image: "reg.example/acme/api", Tag: "1.5.0", Digest: digestB, Published: true}}
	tests := []struct {
		name, cur, want, err string
	}{
		{"indented like MarshalIndent", versionCatalog("api=1.2.0=" + digestA), versionCatalog("api=1.2.0="+digestA, "api-1.5.0=1.5.0="+digestB), ""},
		{"one line", `{"mode": "version", "services": [{"id": "api", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "` + digestA + `", "published": true}]}`,
			`{"mode": "version", "services": [{"id": "api", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "` + digestA + `", "published": true},` +
				`{"id":"api-1.5.0","image":"reg.example/acme/api","tag":"1.5.0","digest":"` + digestB + `","published":true}]}`, ""},
		{"an empty list", "{\"mode\": \"version\", \"services\": [ ]}\n",
			`{"mode": "version", "services": [{"id":"api-1.5.0","image":"reg.example/acme/api","tag":"1.5.0","digest":"` + digestB + `","published":true}]}` + "\n", ""},
		{"keys after services are kept", `{"mode": "version", "services": [], "thirdParty": [{"image": "redis:7@` + digestC + `"}]}`,
			`{"mode": "version", "services": [{"id":"api-1.5.0","image":"reg.example/acme/api","tag":"1.5.0","digest":"` + digestB + `","published":true}], "thirdParty": [{"image": "redis:7@` + digestC + `"}]}`, ""},
		{"brackets in a string are text, not the list's end", `{"mode": "version", "services": [{"id": "x] \"services\": [", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "` + digestA + `", "published": true}]}`,
			`{"mode": "version", "services": [{"id": "x] \"services\": [", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "` + digestA + `", "published": true},` +
				`{"id":"api-1.5.0","image":"reg.example/acme/api","tag":"1.5.0","digest":"` + digestB + `","published":true}]}`, ""},
		{"no services", `{"mode": "version"}`, "", "no services list"},
		{"services is not a list", `{"mode": "version", "services": {"id": "x"}}`, "", "services is not a list"},
		{"not JSON", `mode: version`, "", "not a JSON object"},
		{"the result does not read: the release is listed already", versionCatalog("api-1.5.0=1.5.0=" + digestB), "", "does not read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := catalogAppend{File: "artifacts/catalog.json", Services: add}.Apply([]byte(tt.cur))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Apply(%s) = %q, %v; want an error containing %q", tt.name, got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply(%s) = %v", tt.name, err)
			}
			if d := cmp.Diff(tt.want, string(got)); d != "" {
				t.Errorf("Apply(%s) mismatch (-want +got):\n%s", tt.name, d)
			}
		})
	}
}

func TestPromotionCatalogEdits(t *testing.T) {
	target := &deployplan.Environment{Name: "staging", Source: deployplan.Source{Repo: "https://git.example/m.git", Path: "overlays/staging"}, Catalog: "artifacts/staging.json"}
	onDisk := *target
	onDisk.Catalog = "/etc/deploy-web/staging.json"
	api := func(ref string) []promotion.AppVersion {
		return []promotion.AppVersion{{App: "api", Image: "reg.example/acme/api:" + ref, Version: strings.Split(ref, "@")[0]}}
	}
	twoApps := append(api("1.5.0"), promotion.AppVersion{App: "api-canary", Image: "reg.example/acme/api:1.5.0", Version: "1.5.0"})
	withDigest := api("1.5.0@" + digestC)
	withDigest[0].Digest = digestC
	srcCatalog := func(doc string) sourceCatalog {
		return func() (*deployplan.Catalog, string, error) {
			c, err := deployplan.ParseCatalog([]byte(doc))
			return c, "dev.json", err
		}
	}
	tree := func(doc string) fstest.MapFS {
		return fstest.MapFS{"artifacts/staging.json": {Data: []byte(doc)}}
	}
	tests := []struct {
		name     string
		env      *deployplan.Environment
		tree     fstest.MapFS
		versions []promotion.AppVersion
		source   string
		// want is the entry added ("" none), err a refusal.
		want, err string
	}{
		{"copied from the source", target, tree(versionCatalog("api=1.2.0=" + digestA)), api("1.5.0"),
			versionCatalog("api-1.4.0=1.4.0="+digestC, "api-1.5.0=1.5.0="+digestB), "api-1.5.0 reg.example/acme/api 1.5.0 " + digestB, ""},
		{"the source's id is taken", target, tree(versionCatalog("api=1.2.0=" + digestA)), api("1.5.0"),
			versionCatalog("api=1.5.0=" + digestB), "api-1.5.0 reg.example/acme/api 1.5.0 " + digestB, ""},
		{"two Apps of one release: one entry", target, tree(versionCatalog("api=1.2.0=" + digestA)), twoApps,
			versionCatalog("api-1.5.0=1.5.0=" + digestB), "api-1.5.0 reg.example/acme/api 1.5.0 " + digestB, ""},
		{"listed already", target, tree(versionCatalog("api=1.2.0="+digestA, "x=1.5.0="+digestB)), api("1.5.0"), "{", "", ""},
		{"the source does not list it", target, tree(versionCatalog("api=1.2.0=" + digestA)), api("1.5.0"),
			versionCatalog("api=1.4.0=" + digestB), "", "does not list reg.example/acme/api at 1.5.0, and neither does dev's catalog (dev.json)"},
		{"the source's digest differs from the declared one", target, tree(versionCatalog("api=1.2.0=" + digestA)), withDigest,
			versionCatalog("api=1.5.0=" + digestB), "", "dev declares api at digest " + digestC},
		{"the source's catalog does not read", target, tree(versionCatalog("api=1.2.0=" + digestA)), api("1.5.0"), "{nope", "",
			"dev's catalog, to copy the release from, could not be read"},
		{"the target's catalog does not read", target, tree("{nope"), api("1.5.0"), versionCatalog("api=1.5.0=" + digestB), "", "environment staging's catalog artifacts/staging.json does not read"},
		{"commit mode: not edited", target, tree(`{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`), api("1.5.0"), "{", "", ""},
		{"a catalog on disk: not edited", &onDisk, fstest.MapFS{}, api("1.5.0"), "{", "", ""},
		{"from a commit-mode source", target, tree(versionCatalog("api=1.2.0=" + digestA)), api("0123456789ab"),
			`{"commit": "0123456789abcdef0123456789abcdef01234567", "services": [{"id": "api", "image": "reg.example/acme/api:0123456789ab", "digest": "` + digestB + `", "published": false}]}`,
			"api-0123456789ab reg.example/acme/api 0123456789ab " + digestB, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edits, err := promotionCatalogEdits(tt.tree, tt.env, "dev", tt.versions, srcCatalog(tt.source))
			if tt.err != "" {
				if _, ok := err.(*catalogError); !ok || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("promotionCatalogEdits(%s) = %v, %v; want a *catalogError containing %q", tt.name, edits, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("promotionCatalogEdits(%s) = %v", tt.name, err)
			}
			got := ""
			for _, e := range edits {
				ca := e.(catalogAppend)
				if ca.File != "artifacts/staging.json" {
					t.Errorf("the edit writes %s, want artifacts/staging.json", ca.File)
				}
				for _, s := range ca.Services {
					got = strings.TrimSpace(got + " " + s.ID + " " + s.Image + " " + s.Tag + " " + s.Digest)
				}
			}
			if got != tt.want {
				t.Errorf("promotionCatalogEdits(%s) adds %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestFreeID(t *testing.T) {
	used := map[string]bool{"api": true, "api-1.5.0": true, "web": true}
	tests := []struct{ id, tag, want string }{
		{"worker", "1.5.0", "worker"},
		{"web", "2.0.0", "web-2.0.0"},
		{"api", "1.5.0", "api-1.5.0-2"},
	}
	for _, tt := range tests {
		if got := freeID(used, tt.id, tt.tag); got != tt.want {
			t.Errorf("freeID(%s, %s) = %q, want %q", tt.id, tt.tag, got, tt.want)
		}
	}
}

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
		{"copied from dev", versionCatalog("api-1.2.0=1.2.0="+digestA, "api-1.5.0=1.5.0="+digestB), versionCatalog("api=1.2.0=" + digestA),
			false, 200, "artifacts/staging.json overlays/staging/kustomization.yaml", ""},
		{"copied from dev's catalog on disk", versionCatalog("api-1.2.0=1.2.0="+digestA, "api-1.5.0=1.5.0="+digestB), versionCatalog("api=1.2.0=" + digestA),
			true, 200, "artifacts/staging.json overlays/staging/kustomization.yaml", ""},
		{"listed already", versionCatalog("api-1.5.0=1.5.0=" + digestB), versionCatalog("api=1.2.0="+digestA, "api-1.5.0=1.5.0="+digestB),
			false, 200, "overlays/staging/kustomization.yaml", ""},
		{"dev does not list it", versionCatalog("api-1.2.0=1.2.0=" + digestA), versionCatalog("api=1.2.0=" + digestA),
			false, 422, "", "neither does dev's catalog"},
		{"dev's catalog on disk does not list it", versionCatalog("api-1.2.0=1.2.0=" + digestA), versionCatalog("api=1.2.0=" + digestA),
			true, 422, "", "neither does dev's catalog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"artifacts/staging.json": tt.stagingCatalog}
			devCatalog := "artifacts/dev.json"
			if tt.onDisk {
				// The repository's artifacts/dev.json would list nothing.
				files[devCatalog] = versionCatalog()
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
			cfg, err := deployplan.ParseConfig([]byte(fmt.Sprintf(promoteCatalogConfig, srv.URL, devCatalog)), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			policy, err := roles.Parse("roles.yaml", []byte(promoteRoles), roles.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rows := promoteRows(testNow.Add(-time.Hour), kubeview.HealthHealthy)[:2]
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
			want := []string{"api 1.2.0 " + digestA, "api-1.5.0 1.5.0 " + digestB}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("staging's catalog after the promotion (-want +got):\n%s", d)
			}
		})
	}
}
