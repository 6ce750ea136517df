package gitops

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/catalogtest"
	"github.com/hanzoai/deploy-web/promotion"
)

func TestCatalogAppend(t *testing.T) {
	add := []deployplan.CatalogService{{ID: "api-1.5.0", Image: "reg.example/acme/api", Tag: "1.5.0", Digest: catalogtest.DigestB, Published: true}}
	tests := []struct {
		name, cur, want, err string
	}{
		{"indented like MarshalIndent", catalogtest.Version("api=1.2.0=" + catalogtest.DigestA), catalogtest.Version("api=1.2.0="+catalogtest.DigestA, "api-1.5.0=1.5.0="+catalogtest.DigestB), ""},
		{"one line", `{"mode": "version", "services": [{"id": "api", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "` + catalogtest.DigestA + `", "published": true}]}`,
			`{"mode": "version", "services": [{"id": "api", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "` + catalogtest.DigestA + `", "published": true},` +
				`{"id":"api-1.5.0","image":"reg.example/acme/api","tag":"1.5.0","digest":"` + catalogtest.DigestB + `","published":true}]}`, ""},
		{"an empty list", "{\"mode\": \"version\", \"services\": [ ]}\n",
			`{"mode": "version", "services": [{"id":"api-1.5.0","image":"reg.example/acme/api","tag":"1.5.0","digest":"` + catalogtest.DigestB + `","published":true}]}` + "\n", ""},
		{"keys after services are kept", `{"mode": "version", "services": [], "thirdParty": [{"image": "redis:7@` + catalogtest.DigestC + `"}]}`,
			`{"mode": "version", "services": [{"id":"api-1.5.0","image":"reg.example/acme/api","tag":"1.5.0","digest":"` + catalogtest.DigestB + `","published":true}], "thirdParty": [{"image": "redis:7@` + catalogtest.DigestC + `"}]}`, ""},
		{"brackets in a string are text, not the list's end", `{"mode": "version", "services": [{"id": "x] \"services\": [", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "` + catalogtest.DigestA + `", "published": true}]}`,
			`{"mode": "version", "services": [{"id": "x] \"services\": [", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "` + catalogtest.DigestA + `", "published": true},` +
				`{"id":"api-1.5.0","image":"reg.example/acme/api","tag":"1.5.0","digest":"` + catalogtest.DigestB + `","published":true}]}`, ""},
		{"no services", `{"mode": "version"}`, "", "no services list"},
		{"services is not a list", `{"mode": "version", "services": {"id": "x"}}`, "", "services is not a list"},
		{"not JSON", `mode: version`, "", "not a JSON object"},
		{"the result does not read: the release is listed already", catalogtest.Version("api-1.5.0=1.5.0=" + catalogtest.DigestB), "", "does not read"},
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
	target := &envconfig.Environment{Name: "staging", Source: envconfig.Source{Repo: "https://git.example/m.git", Path: "overlays/staging"}, Catalog: "artifacts/staging.json"}
	onDisk := *target
	onDisk.Catalog = "/etc/deploy-web/staging.json"
	api := func(ref string) []promotion.AppVersion {
		return []promotion.AppVersion{{App: "api", Image: "reg.example/acme/api:" + ref, Version: strings.Split(ref, "@")[0]}}
	}
	twoApps := append(api("1.5.0"), promotion.AppVersion{App: "api-canary", Image: "reg.example/acme/api:1.5.0", Version: "1.5.0"})
	withDigest := api("1.5.0@" + catalogtest.DigestC)
	withDigest[0].Digest = catalogtest.DigestC
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
		env      *envconfig.Environment
		tree     fstest.MapFS
		versions []promotion.AppVersion
		source   string
		// want is the entry added ("" none), err a refusal.
		want, err string
	}{
		{"copied from the source", target, tree(catalogtest.Version("api=1.2.0=" + catalogtest.DigestA)), api("1.5.0"),
			catalogtest.Version("api-1.4.0=1.4.0="+catalogtest.DigestC, "api-1.5.0=1.5.0="+catalogtest.DigestB), "api-1.5.0 reg.example/acme/api 1.5.0 " + catalogtest.DigestB, ""},
		{"the source's id is taken", target, tree(catalogtest.Version("api=1.2.0=" + catalogtest.DigestA)), api("1.5.0"),
			catalogtest.Version("api=1.5.0=" + catalogtest.DigestB), "api-1.5.0 reg.example/acme/api 1.5.0 " + catalogtest.DigestB, ""},
		{"two Apps of one release: one entry", target, tree(catalogtest.Version("api=1.2.0=" + catalogtest.DigestA)), twoApps,
			catalogtest.Version("api-1.5.0=1.5.0=" + catalogtest.DigestB), "api-1.5.0 reg.example/acme/api 1.5.0 " + catalogtest.DigestB, ""},
		{"listed already", target, tree(catalogtest.Version("api=1.2.0="+catalogtest.DigestA, "x=1.5.0="+catalogtest.DigestB)), api("1.5.0"), "{", "", ""},
		{"the source does not list it", target, tree(catalogtest.Version("api=1.2.0=" + catalogtest.DigestA)), api("1.5.0"),
			catalogtest.Version("api=1.4.0=" + catalogtest.DigestB), "", "does not list reg.example/acme/api at 1.5.0, and neither does dev's catalog (dev.json)"},
		{"the source's digest differs from the declared one", target, tree(catalogtest.Version("api=1.2.0=" + catalogtest.DigestA)), withDigest,
			catalogtest.Version("api=1.5.0=" + catalogtest.DigestB), "", "dev declares api at digest " + catalogtest.DigestC},
		{"the source's catalog does not read", target, tree(catalogtest.Version("api=1.2.0=" + catalogtest.DigestA)), api("1.5.0"), "{nope", "",
			"dev's catalog, to copy the release from, could not be read"},
		{"the target's catalog does not read", target, tree("{nope"), api("1.5.0"), catalogtest.Version("api=1.5.0=" + catalogtest.DigestB), "", "environment staging's catalog artifacts/staging.json does not read"},
		{"commit mode: not edited", target, tree(`{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`), api("1.5.0"), "{", "", ""},
		{"a catalog on disk: not edited", &onDisk, fstest.MapFS{}, api("1.5.0"), "{", "", ""},
		{"from a commit-mode source", target, tree(catalogtest.Version("api=1.2.0=" + catalogtest.DigestA)), api("0123456789ab"),
			`{"commit": "0123456789abcdef0123456789abcdef01234567", "services": [{"id": "api", "image": "reg.example/acme/api:0123456789ab", "digest": "` + catalogtest.DigestB + `", "published": false}]}`,
			"api-0123456789ab reg.example/acme/api 0123456789ab " + catalogtest.DigestB, ""},
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
