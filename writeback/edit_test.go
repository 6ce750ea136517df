package writeback

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestSetKustomizeImage(t *testing.T) {
	const prod = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
# production runs the release
namespace: production
resources:
  - ../../base
images:
  - {name: registry.demo.local/inventory/api, newTag: "1.4.2"} # pinned by release
  - name: registry.demo.local/inventory/worker
    newName: mirror.local/worker
    newTag: 1.4.2
`
	for _, tc := range []struct {
		name string
		edit SetKustomizeImage
		in   string
		want string
	}{
		{
			name: "update a flow entry, keep its comment and quotes",
			edit: SetKustomizeImage{Name: "registry.demo.local/inventory/api", NewTag: "1.2.0"},
			in:   prod,
			want: strings.Replace(prod, `newTag: "1.4.2"}`, `newTag: "1.2.0"}`, 1),
		},
		{
			name: "update keeps newName, as set image name=*:tag",
			edit: SetKustomizeImage{Name: "registry.demo.local/inventory/worker", NewTag: "1.3.0"},
			in:   prod,
			want: strings.Replace(prod, "    newTag: 1.4.2\n", "    newTag: 1.3.0\n", 1),
		},
		{
			name: "digest replaces the tag",
			edit: SetKustomizeImage{Name: "registry.demo.local/inventory/worker", Digest: digest},
			in:   prod,
			want: strings.Replace(prod, "    newTag: 1.4.2\n", "    digest: "+digest+"\n", 1),
		},
		{
			name: "append a missing entry",
			edit: SetKustomizeImage{Name: "registry.demo.local/inventory/cron", NewTag: "2"},
			in:   prod,
			want: prod + "  - name: registry.demo.local/inventory/cron\n    newTag: \"2\"\n",
		},
		{
			name: "create images:, keep the sequence indent",
			edit: SetKustomizeImage{Name: "api", NewTag: "v1", Digest: digest},
			in:   "resources:\n- a.yaml\n",
			want: "resources:\n- a.yaml\nimages:\n- name: api\n  newTag: v1\n  digest: " + digest + "\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.edit.File = "k.yaml"
			got, err := tc.edit.Apply([]byte(tc.in))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetKustomizeImageRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit SetKustomizeImage
		in   string
		want string
	}{
		{"no version", SetKustomizeImage{Name: "api"}, "images: []\n", "give a tag or a digest"},
		{"tag with a newline", SetKustomizeImage{Name: "api", NewTag: "1.0\nimages: evil"}, "images: []\n", "not a valid image tag"},
		{"bad digest", SetKustomizeImage{Name: "api", Digest: "sha256:zz"}, "images: []\n", "not sha256"},
		{"name with a tag", SetKustomizeImage{Name: "api:1", NewTag: "2"}, "images: []\n", "without tag or digest"},
		{"two documents", SetKustomizeImage{Name: "api", NewTag: "2"}, "a: 1\n---\nb: 2\n", "one YAML document"},
		{"images not a list", SetKustomizeImage{Name: "api", NewTag: "2"}, "images: {a: b}\n", "not a list"},
		{"listed twice", SetKustomizeImage{Name: "api", NewTag: "2"}, "images:\n- name: api\n- name: api\n", "listed twice"},
		{"not YAML", SetKustomizeImage{Name: "api", NewTag: "2"}, "images: [\n", "not YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.edit.File = "k.yaml"
			_, err := tc.edit.Apply([]byte(tc.in))
			var ee *EditError
			if !errors.As(err, &ee) || ee.File != "k.yaml" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Apply = %v, want *EditError on k.yaml saying %q", err, tc.want)
			}
		})
	}
}

func TestSetAppImage(t *testing.T) {
	const doc = `# the api
apiVersion: hanzo.ai/v1
kind: App
metadata:
  name: api
spec:
  image: registry.demo.local/inventory/api:7d1c4e9a2b3f # built by CI
  env:
    - {name: LOG_LEVEL, value: info}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: api
data:
  image: registry.demo.local/inventory/api:7d1c4e9a2b3f
`
	got, err := SetAppImage{File: "base/api.yaml", Kind: "App", Name: "api", Image: "registry.demo.local/inventory/api:1.2.0"}.Apply([]byte(doc))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := strings.Replace(doc, "api:7d1c4e9a2b3f # built", "api:1.2.0 # built", 1)
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Apply (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		edit SetAppImage
		in   string
		want string
	}{
		{"none", SetAppImage{Kind: "App", Name: "web", Image: "x:1"}, doc, "no document is App web"},
		{"several", SetAppImage{Kind: "App", Name: "api", Image: "x:1"}, doc + "---\n" + strings.SplitN(doc, "---", 2)[0], "2 documents are App api"},
		{"image with a newline", SetAppImage{Kind: "App", Name: "api", Image: "x:1\n  replicas: 0"}, doc, "not an image reference"},
		{"spec not a mapping", SetAppImage{Kind: "App", Name: "api", Image: "x:1"}, "kind: App\nmetadata: {name: api}\nspec: [1]\n", "spec is not a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.edit.File = "f.yaml"
			_, err := tc.edit.Apply([]byte(tc.in))
			var ee *EditError
			if !errors.As(err, &ee) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Apply = %v, want *EditError saying %q", err, tc.want)
			}
		})
	}
}

func TestSetCatalogEntries(t *testing.T) {
	cur := []byte(`{"commit": "aaaaaaa", "services": []}`)
	for _, tc := range []struct {
		name    string
		content string
		want    string // "" = success
	}{
		{"valid", `{"commit": "bbbbbbb", "services": []}`, ""},
		{"not JSON", `{"commit": `, "not JSON"},
		{"two values", `{} {}`, "more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SetCatalogEntries{File: "artifacts/catalog.json", Content: []byte(tc.content)}.Apply(cur)
			if tc.want == "" {
				if err != nil || string(got) != tc.content+"\n" {
					t.Errorf("Apply = %q, %v; want the content and a newline", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Apply = %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if _, err := (SetCatalogEntries{File: "x.yaml", Content: []byte(`{}`)}).Apply([]byte("a: b\n")); err == nil {
		t.Errorf("Apply over a YAML file = nil error, want a refusal (not a catalog)")
	}
}

func TestCleanTarget(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"overlays/dev/kustomization.yaml", true},
		{"base/api.yaml", true},
		{"", false},
		{"/etc/passwd", false},
		{"../x", false},
		{"..", false},
		{".", false},
		{"a/../../x", false},
		{"a//b", false},
		{"a/./b", false},
		{`a\b`, false},
		{".git/config", false},
		{"sub/.GIT/hooks/pre-commit", false},
		{"a/b\nc", false},
	} {
		_, err := cleanTarget(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("cleanTarget(%q) = %v, want ok %t", tc.path, err, tc.ok)
		}
	}
}
