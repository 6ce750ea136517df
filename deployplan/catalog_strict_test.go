package deployplan

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/strictyaml/strictyamltest"
)

// readmeCatalogs are the catalogs of README's "The artifact catalog",
// their digests written out.
var readmeCatalogs = map[string]string{
	"commit mode": `{"commit": "3f9c2e1d4b5a69788796a5b4c3d2e1f0a9b8c7d6",
 "services": [
   {"id": "api", "image": "ghcr.io/acme/api:3f9c2e1d4b5a69788796a5b4c3d2e1f0a9b8c7d6", "digest": "` + digestA + `", "published": true}]}`,
	"version mode": `{"mode": "version",
 "commit": "3f9c2e1d4b5a69788796a5b4c3d2e1f0a9b8c7d6",
 "services": [
   {"id": "api",    "image": "ghcr.io/acme/api",    "tag": "6.14.1", "digest": "` + digestA + `", "published": true},
   {"id": "worker", "image": "ghcr.io/acme/worker", "tag": "6.14.0", "digest": "` + digestB + `", "published": true}],
 "thirdParty": [
   {"image": "docker.io/library/redis:7.4@` + digestB + `"}]}`,
}

// TestParseCatalogExactKeys: every key of the catalog in every other
// spelling is refused, and the README's catalogs decode as before.
func TestParseCatalogExactKeys(t *testing.T) {
	strictyamltest.CaseVariants(t, []byte(readmeCatalogs["version mode"]), reflect.TypeFor[Catalog](), true, func(doc []byte) error {
		_, err := ParseCatalog(doc)
		return err
	})
	for name, doc := range readmeCatalogs {
		var old Catalog
		if err := yaml.UnmarshalStrict([]byte(doc), &old); err != nil {
			t.Fatalf("%s: the old decoder: %v", name, err)
		}
		got, err := ParseCatalog([]byte(doc))
		if err != nil {
			t.Fatalf("%s: ParseCatalog = %v", name, err)
		}
		if old.Mode == "" {
			old.Mode = CatalogModeCommit // ParseCatalog fills the default in
		}
		if diff := cmp.Diff(&old, got); diff != "" {
			t.Errorf("%s: ParseCatalog differs from the old decoder (-old +new):\n%s", name, diff)
		}
	}
	// A catalog entry written twice in two spellings: encoding/json took
	// the last ("published": false); now an error naming the entry.
	doc := `{"commit": "` + commitA + `", "services": [{"id": "api", "image": "ghcr.io/acme/api", "digest": "` + digestA + `",` + "\n" +
		`"Published": true, "published": false}]}`
	var ce *envconfig.ConfigError
	if _, err := ParseCatalog([]byte(doc)); !errors.As(err, &ce) || !strings.Contains(err.Error(), `line 2: catalog.services[0].Published: unknown key: keys are case-sensitive, did you mean "published"?`) {
		t.Errorf("ParseCatalog(Published and published) = %v, want a *envconfig.ConfigError naming line 2 and catalog.services[0].Published", err)
	}
}

// TestParseCaptureIndexExactKeys: an index line takes each key once, in
// its one spelling: `"Namespace": "kube-system", "namespace": ""` decoded
// as namespace "" before, an entry keyed before its namespace.
func TestParseCaptureIndexExactKeys(t *testing.T) {
	good := `{"apiVersion": "v1", "kind": "Service", "namespace": "dev", "name": "web", "existed": true, "uid": "u-1", "file": "v1.Service.web.json", "note": "n"}`
	strictyamltest.CaseVariants(t, []byte(good), reflect.TypeFor[captureEntry](), true, func(doc []byte) error {
		_, err := parseCaptureIndex(doc)
		return err
	})
	index := "\n" + good + "\n" + `{"apiVersion": "v1", "kind": "Service", "Namespace": "kube-system", "namespace": "", "name": "evil"}` + "\n"
	_, err := parseCaptureIndex([]byte(index))
	want := `index.jsonl line 3: not an index entry: line 3: Namespace: unknown key: keys are case-sensitive, did you mean "namespace"?`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("parseCaptureIndex = %v, want an error containing %q", err, want)
	}
}

// TestParseCatalogNodeBudget: a catalog of a million empty values stops at
// the node budget, as a configuration error.
func TestParseCatalogNodeBudget(t *testing.T) {
	doc := `{"commit": "` + commitA + `", "services": [` + strings.Repeat("{},", 1<<20) + `{}]}`
	_, err := ParseCatalog([]byte(doc))
	var ce *envconfig.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "more than 120100 nodes") {
		t.Errorf("ParseCatalog(a million entries) = %v, want a *envconfig.ConfigError naming the node budget", err)
	}
	line := `{"kind": "Service", "name": "a", "note": [` + strings.Repeat("0,", 100) + `0]}`
	if _, err := parseCaptureIndex([]byte(line)); err == nil || !strings.Contains(err.Error(), "more than 64 nodes") {
		t.Errorf("parseCaptureIndex(a line of 100 values) = %v, want the node budget", err)
	}
}
