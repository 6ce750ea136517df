package deployplan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hanzoai/deploy-web/envconfig"
)

const (
	digestB   = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	redisRef  = "docker.io/library/redis:7.4@" + digestB
	apiRepo   = "registry.example.com/acme/api"
	workerImg = "registry.example.com/acme/worker"
)

func TestParseCatalogModes(t *testing.T) {
	svc := func(extra string) string {
		return `{"id": "api", "image": "` + apiRepo + `", "digest": "` + digestA + `", "published": true` + extra + `}`
	}
	tests := []struct {
		name, json string
		// wantErr is a substring of the error (each error names its field);
		// "" means the catalog is valid.
		wantErr string
	}{
		{"commit mode by default", `{"commit": "` + commitA + `", "services": [` + svc("") + `]}`, ""},
		{"commit mode, short commit", `{"mode": "commit", "commit": "1111111", "services": []}`, ""},
		{"commit is a version", `{"commit": "6.14.1", "services": []}`, `catalog.commit: "6.14.1" is not a commit`},
		{"commit is latest", `{"commit": "latest", "services": []}`, `catalog.commit: "latest" is not a commit`},
		{"commit too short", `{"commit": "111111", "services": []}`, `catalog.commit`},
		{"commit upper case", `{"commit": "ABCDEF1", "services": []}`, `catalog.commit`},
		{"commit missing", `{"services": []}`, `catalog.commit: required in commit mode`},
		{"tag in commit mode", `{"commit": "` + commitA + `", "services": [` + svc(`, "tag": "1.0.0"`) + `]}`, `catalog.services[0].tag: only in version mode`},
		{"unknown mode", `{"mode": "semver", "services": []}`, `catalog.mode: "semver"`},
		{"unknown key", `{"commit": "` + commitA + `", "services": [], "thirdParties": []}`, `catalog.thirdParties: unknown key: did you mean "thirdParty"?`},
		{"version mode", `{"mode": "version", "services": [` + svc(`, "tag": "6.14.1"`) + `]}`, ""},
		{"version mode with a commit", `{"mode": "version", "commit": "` + commitA + `", "services": [` + svc(`, "tag": "6.14.1"`) + `]}`, ""},
		{"version mode, bad commit", `{"mode": "version", "commit": "v1", "services": []}`, `catalog.commit: "v1" is not a commit`},
		{"version mode without tag", `{"mode": "version", "services": [` + svc("") + `]}`, `catalog.services[0].tag: required in version mode`},
		{"version mode, bad tag", `{"mode": "version", "services": [` + svc(`, "tag": "a b"`) + `]}`, `catalog.services[0].tag: "a b" is not a valid image tag`},
		{"version mode, image tag differs", `{"mode": "version", "services": [{"id": "api", "image": "` + apiRepo + `:1.0.0", "tag": "2.0.0", "digest": "` + digestA + `"}]}`, `catalog.services[0].image: tag "1.0.0" differs`},
		{"bad digest", `{"commit": "` + commitA + `", "services": [{"id": "api", "image": "` + apiRepo + `", "digest": "sha256:xyz"}]}`, `catalog.services[0].digest`},
		{"third party", `{"commit": "` + commitA + `", "services": [], "thirdParty": [{"image": "` + redisRef + `"}, {"image": "busybox@` + digestA + `"}]}`, ""},
		{"third party without digest", `{"commit": "` + commitA + `", "services": [], "thirdParty": [{"image": "redis:7.4"}]}`, `catalog.thirdParty[0].image: "redis:7.4" has no digest`},
		{"third party, bad digest", `{"commit": "` + commitA + `", "services": [], "thirdParty": [{"image": "redis@sha256:12"}]}`, `catalog.thirdParty[0].image`},
		{"version mode, two releases of an image", `{"mode": "version", "services": [` + svc(`, "tag": "6.14.1"`) + `, {"id": "api-6.14.0", "image": "` + apiRepo + `", "tag": "6.14.0", "digest": "` + digestB + `"}]}`, ""},
		{"version mode, one release twice", `{"mode": "version", "services": [` + svc(`, "tag": "6.14.1"`) + `, {"id": "api-again", "image": "` + apiRepo + `:6.14.1", "tag": "6.14.1", "digest": "` + digestB + `"}]}`, `catalog.services[1].tag: ` + apiRepo + ` at "6.14.1" is listed twice`},
		{"third party, no image", `{"commit": "` + commitA + `", "services": [], "thirdParty": [{}]}`, `catalog.thirdParty[0].image: required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCatalog([]byte(tt.json))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseCatalog: %v", err)
				}
				return
			}
			var ce *envconfig.ConfigError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &ce) {
				t.Fatalf("ParseCatalog = %v, want a *ConfigError containing %q", err, tt.wantErr)
			}
		})
	}
}

func versionCatalog() *Catalog {
	return &Catalog{Mode: CatalogModeVersion, Services: []CatalogService{
		{ID: "api", Image: apiRepo, Tag: "6.14.1", Digest: digestA, Published: true},
		{ID: "worker", Image: workerImg, Tag: "6.14.0", Digest: digestA, Published: true},
	}, ThirdParty: []ThirdPartyImage{{Image: redisRef}}}
}

// twoReleases is versionCatalog listing api at 6.14.0 too (with another
// digest): the release a rollback returns to.
func twoReleases() *Catalog {
	c := versionCatalog()
	c.Services = append(c.Services, CatalogService{ID: "api-6.14.0", Image: apiRepo, Tag: "6.14.0", Digest: digestB, Published: true})
	return c
}

func TestSourceChecksVersionModeAndThirdParty(t *testing.T) {
	w := func(images ...string) []Workload {
		var cs []Container
		for i, img := range images {
			cs = append(cs, Container{Name: fmt.Sprintf("c%d", i), Image: img})
		}
		return []Workload{{Kind: "Deployment", Name: "app", Containers: cs}}
	}
	mirrors := envconfig.EnvMirrors{Commit: []string{"APP_VERSION"}}
	tests := []struct {
		name      string
		cat       func() *Catalog
		workloads []Workload
		want      []string
	}{
		{"version mode converged", versionCatalog, w(apiRepo+":6.14.1", workerImg+":6.14.0@"+digestA, redisRef), []string{}},
		{"version mode, wrong version", versionCatalog, w(apiRepo + ":6.14.0"), []string{"tag-not-catalog-version:Deployment/app/c0"}},
		{"version mode, untagged", versionCatalog, w(apiRepo), []string{"tag-not-catalog-version:Deployment/app/c0"}},
		{"version mode, digest differs", versionCatalog, w(apiRepo + ":6.14.1@" + digestB), []string{"digest-not-catalog-digest:Deployment/app/c0"}},
		{"version mode, a commit tag is not the version", versionCatalog, w(apiRepo + ":" + commitA), []string{"tag-not-catalog-version:Deployment/app/c0"}},
		{"third party by digest, tag optional", versionCatalog, w("redis@"+digestB, "docker.io/library/redis:7.4@"+digestB, "redis:7.4@"+digestB), []string{}},
		{"third party unpinned", versionCatalog, w("redis:7.4"), []string{"third-party-not-pinned:Deployment/app/c0"}},
		{"third party, other digest", versionCatalog, w("redis:7.4@" + digestA), []string{"third-party-not-in-catalog:Deployment/app/c0"}},
		{"third party, other tag", versionCatalog, w("redis:7.2@" + digestB), []string{"third-party-not-in-catalog:Deployment/app/c0"}},
		{"not in catalog", versionCatalog, w("busybox:1.38.0@" + digestB), []string{"image-not-in-catalog:Deployment/app/c0"}},
		{"version mode, an earlier release listed too", twoReleases, w(apiRepo+":6.14.0@"+digestB, workerImg+":6.14.0"), []string{}},
		{"version mode, the newer of two releases", twoReleases, w(apiRepo + ":6.14.1@" + digestA), []string{}},
		{"version mode, the digest of the other release", twoReleases, w(apiRepo + ":6.14.0@" + digestA), []string{"digest-not-catalog-digest:Deployment/app/c0"}},
		{"version mode, neither release", twoReleases, w(apiRepo + ":6.13.0"), []string{"tag-not-catalog-version:Deployment/app/c0"}},
		{"commit mode: the first entry of a repository", func() *Catalog {
			c := testCatalog(true)
			c.Services = append(c.Services, CatalogService{ID: "api-old", Image: apiRepo + ":" + commitA, Digest: digestB, Published: true})
			return c
		}, w(apiRepo + ":" + commitA + "@" + digestB), []string{"digest-not-catalog-digest:Deployment/app/c0"}},
		{"third party in commit mode", func() *Catalog {
			c := testCatalog(true)
			c.ThirdParty = []ThirdPartyImage{{Image: redisRef}}
			return c
		}, w(apiRepo+":"+commitA, "redis@"+digestB), []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(SourceChecks(tt.workloads, tt.cat(), mirrors))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SourceChecks (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("commit mirror in version mode", func(t *testing.T) {
		cat := versionCatalog()
		cat.Commit = commitA
		ok := []Workload{{Kind: "Deployment", Name: "app", Containers: []Container{
			{Name: "a", Image: apiRepo + ":6.14.1", Env: []Env{{Name: "APP_VERSION", Value: "6.14.1"}}},
			{Name: "b", Image: apiRepo + ":6.14.1", Env: []Env{{Name: "APP_VERSION", Value: commitA}}},
			{Name: "r", Image: redisRef, Env: []Env{{Name: "APP_VERSION", Value: "7.4"}}},
		}}}
		if got := ids(SourceChecks(ok, cat, mirrors)); len(got) != 0 {
			t.Errorf("blockers %v, want none", got)
		}
		ok[0].Containers[0].Env[0].Value = "6.0.0"
		if got := ids(SourceChecks(ok, cat, mirrors)); !cmp.Equal(got, []string{"env-mirror-commit:Deployment/app/a/APP_VERSION"}) {
			t.Errorf("blockers %v, want env-mirror-commit", got)
		}
	})
}

// TestOneBlockerPerRootCause: a project whose images are tagged with
// versions, planned with a commit-mode catalog, gets one blocker (not one
// per container and kind) naming every container, and a hint that proposes
// version mode, never a version as a commit.
func TestOneBlockerPerRootCause(t *testing.T) {
	cat := testCatalog(true)
	cat.Services[0].Image = apiRepo + ":6.14.1"
	var ws []Workload
	for i := range 12 {
		ws = append(ws, Workload{Kind: "Deployment", Name: fmt.Sprintf("svc%02d", i), Containers: []Container{
			{Name: "main", Image: apiRepo + ":6.14.1", Env: []Env{{Name: "GIT_COMMIT", Value: "6.14.1"}}},
			{Name: "sidecar", Image: workerImg + ":6.14.1"},
		}})
	}
	src := SourceChecks(ws, cat, envconfig.EnvMirrors{Commit: []string{"GIT_COMMIT"}})
	_, gates := ArtifactGates(ws, cat, cat.Commit, nil)
	all := dedupeBlockers(append(src, gates...))
	var got []string
	for _, b := range all {
		got = append(got, b.ID)
	}
	if diff := cmp.Diff([]string{"env-mirror-commit", "tag-not-catalog-commit"}, got); diff != "" {
		t.Fatalf("blocker ids (-want +got):\n%s", diff)
	}
	tag := all[1]
	if n := len(tag.Affected); n != 25 { // 24 containers and the catalog entry
		t.Errorf("tag-not-catalog-commit affects %d, want 25: %v", n, tag.Affected)
	}
	if !strings.Contains(tag.UnblockHint, `"mode": "version"`) || strings.Contains(tag.UnblockHint, "publish the catalog of commit") {
		t.Errorf("hint %q: want version mode proposed, no version as a commit", tag.UnblockHint)
	}
	if !strings.Contains(tag.Message, "and 20 more") {
		t.Errorf("message %q: want the first details and a count", tag.Message)
	}
	for _, tags := range [][]string{{""}, {"6.14.1"}, {commitB}, {"", commitB}} {
		h := tagHint(tags, commitA)
		if strings.Contains(h, `commit ""`) || strings.Contains(h, `commit 6.14.1`) {
			t.Errorf("tagHint(%q) = %q: proposes a non-commit as commit", tags, h)
		}
	}
	if h := tagHint([]string{commitB}, commitA); !strings.Contains(h, "publish the catalog of commit "+commitB) {
		t.Errorf("tagHint(other commit) = %q", h)
	}
}

func TestGroupBlockers(t *testing.T) {
	in := []Blocker{
		{ID: "job-not-allowlisted:a", Message: "Job a: m", UnblockHint: "allowlist a"},
		{ID: "job-not-allowlisted:b", Message: "Job b: m", UnblockHint: "allowlist b"},
		{ID: "job-not-allowlisted:a", Message: "Job a: m", UnblockHint: "allowlist a"},
		{ID: "cluster-unreachable", Message: "down", UnblockHint: "fix"},
		{ID: "cluster-unreachable", Message: "down", UnblockHint: "fix"},
	}
	got := groupBlockers(in)
	want := []Blocker{
		{ID: "cluster-unreachable", Message: "down", UnblockHint: "fix"},
		{ID: "job-not-allowlisted", Message: "2 problems: Job a: m; Job b: m", UnblockHint: "allowlist a; allowlist b", Affected: []string{"a", "b"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groupBlockers (-want +got):\n%s", diff)
	}
	// Grouping is idempotent (normalize runs more than once).
	if diff := cmp.Diff(want, groupBlockers(got)); diff != "" {
		t.Errorf("groupBlockers twice (-want +got):\n%s", diff)
	}
}

func TestCatalogTaggedWith(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	commitCat := &Catalog{Mode: CatalogModeCommit, Commit: commit}
	versionCat := &Catalog{Mode: CatalogModeVersion, Commit: commit}
	tests := []struct {
		name string
		cat  *Catalog
		tag  string
		want bool
	}{
		{"the commit", commitCat, commit, true},
		{"a 12-character prefix", commitCat, commit[:12], true},
		{"7 characters", commitCat, commit[:7], true},
		{"6 characters are too few", commitCat, commit[:6], false},
		{"another commit", commitCat, "fedcba9876543210", false},
		{"a version", commitCat, "1.2.0", false},
		{"uppercase is not the commit", commitCat, strings.ToUpper(commit[:12]), false},
		{"empty", commitCat, "", false},
		{"version mode never", versionCat, commit[:12], false},
	}
	for _, tt := range tests {
		if got := tt.cat.TaggedWith(tt.tag); got != tt.want {
			t.Errorf("TaggedWith(%s: %q) = %v, want %v", tt.name, tt.tag, got, tt.want)
		}
	}
}

func TestParseCatalogFileBudget(t *testing.T) {
	ok := []byte(`{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`)
	if c, err := ParseCatalogFile("catalog.json", ok); err != nil || c.Commit != "0123456789abcdef0123456789abcdef01234567" {
		t.Fatalf("ParseCatalogFile(a catalog) = %+v, %v; want it parsed", c, err)
	}
	// One byte over the cap, in a catalog that would otherwise parse.
	huge := append(append([]byte{}, ok[:len(ok)-1]...), []byte(`, "thirdParty": []`+strings.Repeat(" ", MaxCatalogBytes))...)
	huge = append(huge, '}')
	if _, err := ParseCatalogFile("catalog.json", huge); err == nil || !strings.Contains(err.Error(), "catalog catalog.json is larger than") {
		t.Errorf("ParseCatalogFile(%d bytes) = %v, want refused as larger than %d bytes", len(huge), err, MaxCatalogBytes)
	}
}
