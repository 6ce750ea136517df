package writeback

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// locateTree writes files (and links: path -> target) into a temp folder.
func locateTree(t *testing.T, files, links map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	for p, target := range links {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func with(base map[string]string, kv ...string) map[string]string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(m, kv[i])
			continue
		}
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestLocate(t *testing.T) {
	inv := fixture(t)
	api := ImageChange{Dir: "overlays/dev", Kind: "App", Name: "api", Repository: apiRepo, Tag: "1.2.0"}
	qa := ImageChange{Dir: "overlays/qa", Kind: "App", Name: "api", Repository: apiRepo, Tag: "1.2.0"}
	qaEntry := SetKustomizeImage{File: "overlays/qa/kustomization.yaml", Name: apiRepo, NewTag: "1.2.0"}
	apiFile := SetAppImage{File: "base/api.yaml", Kind: "App", Name: "api", Image: apiRepo + ":1.2.0"}
	const appImageConfig = "images:\n  - path: spec/image\n    kind: App\n"
	kust := func(extra string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../base\n" + extra
	}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		links  map[string]string
		change ImageChange
		want   []Edit
		err    string
	}{
		{
			name:   "the App's file when the folder has no images: entry",
			files:  inv,
			change: api,
			want:   []Edit{apiFile},
		},
		{
			name:   "digest keeps the tag off",
			files:  inv,
			change: ImageChange{Dir: "overlays/dev", Kind: "App", Name: "worker", Repository: "registry.demo.local/inventory/worker", Digest: digest},
			want:   []Edit{SetAppImage{File: "base/worker.yaml", Kind: "App", Name: "worker", Image: "registry.demo.local/inventory/worker@" + digest}},
		},
		{
			name:   "the images: entry of the folder, when it reaches spec.image",
			files:  with(inv, "overlays/qa/kustomization.yaml", kust("configurations: [app-image.yaml]\nimages:\n  - {name: "+apiRepo+", newTag: \"1.4.0\"}\n"), "overlays/qa/app-image.yaml", appImageConfig),
			change: qa,
			want:   []Edit{qaEntry},
		},
		{
			name:   "an images: entry that reaches spec.image, overridden by a patch",
			files:  with(inv, "overlays/qa/kustomization.yaml", kust("configurations: [app-image.yaml]\nimages:\n  - {name: "+apiRepo+", newTag: \"1.4.0\"}\npatches:\n  - target: {kind: App, name: api}\n    patch: '[{op: replace, path: /spec/image, value: x:1}]'\n"), "overlays/qa/app-image.yaml", appImageConfig),
			change: qa,
			err:    "overlays/qa/kustomization.yaml: a patch sets App api's spec.image",
		},
		{
			name:   "configurations for all kinds",
			files:  with(inv, "overlays/qa/kustomization.yaml", kust("configurations: [app-image.yaml]\nimages:\n  - {name: "+apiRepo+", newTag: \"1.4.0\"}\n"), "overlays/qa/app-image.yaml", "images:\n  - path: /spec/image\n"),
			change: qa,
			want:   []Edit{qaEntry},
		},
		{
			name:   "the images: entry and the App's file, when the entry does not reach spec.image",
			files:  with(inv, "overlays/qa/kustomization.yaml", kust("images:\n  - {name: "+apiRepo+", newTag: \"1.4.0\"}\n")),
			change: qa,
			want:   []Edit{qaEntry, apiFile},
		},
		{
			name:   "configurations for another kind",
			files:  with(inv, "overlays/qa/kustomization.yaml", kust("configurations: [app-image.yaml]\nimages:\n  - {name: "+apiRepo+", newTag: \"1.4.0\"}\n"), "overlays/qa/app-image.yaml", "images:\n  - {path: spec/image, kind: Widget}\n"),
			change: qa,
			want:   []Edit{qaEntry, apiFile},
		},
		{
			name:   "an entry matched by newName is edited under its name",
			files:  with(inv, "overlays/qa/kustomization.yml", kust("images:\n  - {name: api, newName: "+apiRepo+", newTag: \"1.4.0\"}\n")),
			change: ImageChange{Dir: "./overlays/qa", Kind: "App", Name: "api", Repository: apiRepo, Tag: "1.2.0"},
			want:   []Edit{SetKustomizeImage{File: "overlays/qa/kustomization.yml", Name: "api", NewTag: "1.2.0"}, apiFile},
		},
		{
			name:   "an images: entry of a base is not the folder's",
			files:  with(inv, "base/kustomization.yaml", inv["base/kustomization.yaml"]+"images:\n  - {name: "+apiRepo+", newTag: x}\n"),
			change: api,
			want:   []Edit{apiFile},
		},
		{
			name:   "nested folders and components",
			files:  with(inv, "overlays/dev/kustomization.yaml", kust("components:\n  - ../../components/extra\n"), "components/extra/kustomization.yaml", "kind: Component\nresources:\n  - apps/cron.yaml\n", "components/extra/apps/cron.yaml", "kind: App\nmetadata: {name: cron}\nspec: {image: \"r/cron:1\"}\n"),
			change: ImageChange{Dir: "overlays/dev", Kind: "App", Name: "cron", Repository: "r/cron", Tag: "2"},
			want:   []Edit{SetAppImage{File: "components/extra/apps/cron.yaml", Kind: "App", Name: "cron", Image: "r/cron:2"}},
		},
		{
			name:   "prod: a patch sets the image",
			files:  inv,
			change: ImageChange{Dir: "overlays/prod", Kind: "App", Name: "worker", Repository: "registry.demo.local/inventory/worker", Tag: "1.2.0"},
			// prod's own inline patch of worker's spec.image is the edit.
			want: []Edit{SetOverlayImage{File: "overlays/prod/kustomization.yaml", Kind: "App", Name: "worker", Image: "registry.demo.local/inventory/worker:1.2.0"}},
		},
		{
			name:   "prod: a patch overrides the images: entry too",
			files:  inv,
			change: ImageChange{Dir: "overlays/prod", Kind: "App", Name: "api", Repository: apiRepo, Tag: "1.2.0"},
			err:    "a patch sets App api's spec.image",
		},
		{
			name:   "a strategic merge patch in a file",
			files:  with(inv, "overlays/dev/kustomization.yaml", kust("patches:\n  - path: pin.yaml\n"), "overlays/dev/pin.yaml", "apiVersion: hanzo.ai/v1\nkind: App\nmetadata: {name: api}\nspec: {image: pinned:1}\n"),
			change: api,
			err:    "a patch sets App api's spec.image",
		},
		{
			name:   "a patch of another App does not matter",
			files:  with(inv, "overlays/dev/kustomization.yaml", kust("patches:\n  - target: {kind: App, name: worker}\n    patch: '[{op: replace, path: /spec/image, value: w:1}]'\n")),
			change: api,
			want:   []Edit{apiFile},
		},
		{
			name:   "declared twice",
			files:  with(inv, "base/kustomization.yaml", inv["base/kustomization.yaml"]+"  - api-copy.yaml\n", "base/api-copy.yaml", inv["base/api.yaml"]),
			change: api,
			err:    "declared in base/api.yaml, base/api-copy.yaml",
		},
		{
			name:   "not declared",
			files:  inv,
			change: ImageChange{Dir: "overlays/dev", Kind: "App", Name: "web", Tag: "1"},
			err:    "no App web in the files overlays/dev/kustomization.yaml reaches",
		},
		{
			name:   "another image's repository",
			files:  inv,
			change: ImageChange{Dir: "overlays/dev", Kind: "App", Name: "api", Repository: "registry.demo.local/inventory/worker", Tag: "1"},
			err:    `has image "registry.demo.local/inventory/api:7d1c4e9a2b3f", not of registry.demo.local/inventory/worker`,
		},
		{
			name:   "a linked resource is skipped and named",
			files:  with(inv, "base/api.yaml", ""),
			links:  map[string]string{"base/api.yaml": "/etc/passwd"},
			change: api,
			err:    "symbolic links skipped: base/api.yaml",
		},
		{
			name:   "a linked kustomization is not read",
			files:  with(inv, "overlays/dev/kustomization.yaml", ""),
			links:  map[string]string{"overlays/dev/kustomization.yaml": "../prod/kustomization.yaml"},
			change: api,
			err:    "overlays/dev has no kustomization",
		},
		{
			name:   "a resource out of the repository",
			files:  with(inv, "overlays/dev/kustomization.yaml", kust("  - ../../../outside\n")),
			change: api,
			err:    `resource "../../../outside" leaves the repository`,
		},
		{
			name:   "the folder out of the repository",
			files:  inv,
			change: ImageChange{Dir: "../x", Kind: "App", Name: "api", Tag: "1"},
			err:    "not inside the repository",
		},
		{
			name:   "a cycle ends",
			files:  with(inv, "base/kustomization.yaml", inv["base/kustomization.yaml"]+"  - ../overlays/dev\n"),
			change: api,
			want:   []Edit{apiFile},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := locateTree(t, tc.files, tc.links)
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			got, err := Locate(root.FS(), tc.change, 0)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("Locate = %v, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Locate: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Locate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocateBounded(t *testing.T) {
	files := map[string]string{"env/kustomization.yaml": "resources:\n  - big.yaml\n", "env/big.yaml": strings.Repeat("# padding\n", 1000)}
	dir := locateTree(t, files, nil)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = Locate(root.FS(), ImageChange{Dir: "env", Kind: "App", Name: "api", Tag: "1"}, 1000)
	if err == nil || !strings.Contains(err.Error(), "MaxFileBytes") {
		t.Errorf("Locate over a file above the cap = %v, want a MaxFileBytes error", err)
	}
}

// TestLocateAliasBomb: every file Locate reads passes the YAML budget
// before a decoder reads it: sigs.k8s.io/yaml expands aliases into Go
// values (a kustomization of ~15 KB decodes to ~300,000 nodes, under its
// own alias-ratio guard), kyaml keeps them as nodes.
func TestLocateAliasBomb(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("pad: [" + strings.TrimSuffix(strings.Repeat("a,", 3300), ",") + "]\n")
	bomb.WriteString("l0: &l0 [" + strings.TrimSuffix(strings.Repeat("a,", 100), ",") + "]\n")
	bomb.WriteString("l1: &l1 [" + strings.TrimSuffix(strings.Repeat("*l0,", 100), ",") + "]\n")
	bomb.WriteString("l2: [" + strings.TrimSuffix(strings.Repeat("*l1,", 30), ",") + "]\n")
	app := "apiVersion: deploy.hanzo.ai/v1\nkind: App\nmetadata: {name: api}\nspec: {image: reg.example/api:1}\n"
	for _, tc := range []struct {
		name, file string
		files      map[string]string
	}{
		{"the kustomization", "env/kustomization.yaml", map[string]string{
			"env/kustomization.yaml": "resources:\n  - app.yaml\n" + bomb.String(), "env/app.yaml": app}},
		{"a configurations file", "env/conf.yaml", map[string]string{
			"env/kustomization.yaml": "resources:\n  - app.yaml\nimages:\n  - name: reg.example/api\n    newTag: \"1\"\nconfigurations:\n  - conf.yaml\n",
			"env/conf.yaml":          bomb.String(), "env/app.yaml": app}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := locateTree(t, tc.files, nil)
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			got, err := Locate(root.FS(), ImageChange{Dir: "env", Kind: "App", Name: "api", Repository: "reg.example/api", Tag: "2"}, 0)
			if err == nil || !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), "added by aliases") {
				t.Errorf("Locate with an alias bomb in %s = %v, %v; want an error naming %s and its aliases", tc.file, got, err, tc.file)
			}
		})
	}
}

// TestLocateEditsTheOverlaysOverride: an inline patch of the App's
// spec.image that the folder's own kustomization owns (SetOverlayImage's
// form) is the edit; SetOverlayImage adds one where there is none and
// edits it in place where there is.
func TestLocateEditsTheOverlaysOverride(t *testing.T) {
	kust := "resources: [../../base]\npatches:\n  - target: {kind: App, name: api}\n    patch: |\n      - op: add\n        path: /spec/image\n        value: reg.example/acme/api:1.2.0\n"
	tree := fstest.MapFS{
		"base/kustomization.yaml":         {Data: []byte("resources: [api.yaml]\n")},
		"base/api.yaml":                   {Data: []byte("apiVersion: hanzo.ai/v1\nkind: App\nmetadata: {name: api}\nspec: {image: reg.example/acme/api:1.0.0}\n")},
		"overlays/dev/kustomization.yaml": {Data: []byte(kust)},
	}
	c := ImageChange{Dir: "overlays/dev", Kind: "App", Name: "api", Repository: "reg.example/acme/api", Tag: "1.1.0"}
	got, err := Locate(tree, c, 0)
	want := []Edit{SetOverlayImage{File: "overlays/dev/kustomization.yaml", Kind: "App", Name: "api", Image: "reg.example/acme/api:1.1.0"}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Locate = %v, %v; want %v", got, err, want)
	}
	out, err := got[0].Apply([]byte(kust))
	if err != nil || strings.Count(string(out), "/spec/image") != 1 || !strings.Contains(string(out), "value: reg.example/acme/api:1.1.0") {
		t.Errorf("Apply (in place) = %s, %v; want the one patch at 1.1.0", out, err)
	}
	out, err = got[0].Apply([]byte("resources: [../../base]\n"))
	if err != nil || !strings.Contains(string(out), "kind: App") || !strings.Contains(string(out), "value: reg.example/acme/api:1.1.0") {
		t.Errorf("Apply (added) = %s, %v; want a new patch at 1.1.0", out, err)
	}
	if _, err := (SetOverlayImage{File: "k.yaml", Kind: "App", Name: "api", Image: "x y"}).Apply([]byte("{}\n")); err == nil {
		t.Errorf("Apply of image %q = nil error, want a refusal", "x y")
	}
}

// TestLocateContainerImage: a workload's container image (a Deployment,
// a CronJob, no App) is changed by an images: entry of the folder's own
// kustomization, added when there is none and edited when there is; the
// file that declares the workload (a shared base) is never an edit.
func TestLocateContainerImage(t *testing.T) {
	const repo = "reg.example/acme/api"
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n    spec:\n      initContainers: [{name: migrate, image: reg.example/acme/migrate:1.0.0}]\n      containers: [{name: api, image: " + repo + ":1.0.0}]\n"
	cronJob := "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: report}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: report, image: " + repo + ":1.0.0}]\n"
	tree := func(overlay string) fstest.MapFS {
		return fstest.MapFS{
			"base/kustomization.yaml":         {Data: []byte("resources: [api.yaml, report.yaml]\n")},
			"base/api.yaml":                   {Data: []byte(deployment)},
			"base/report.yaml":                {Data: []byte(cronJob)},
			"overlays/dev/kustomization.yaml": {Data: []byte("resources: [../../base]\n" + overlay)},
		}
	}
	const kf = "overlays/dev/kustomization.yaml"
	for _, tc := range []struct {
		name    string
		overlay string
		change  ImageChange
		want    []Edit
		err     string
	}{
		{"no entry: one is added", "", ImageChange{Dir: "overlays/dev", Kind: "Deployment", Name: "api", Repository: repo, Tag: "1.1.0"},
			[]Edit{SetKustomizeImage{File: kf, Name: repo, NewTag: "1.1.0"}}, ""},
		{"the entry is edited", "images:\n  - {name: " + repo + ", newTag: 1.0.5}\n", ImageChange{Dir: "overlays/dev", Kind: "Deployment", Name: "api", Repository: repo, Digest: digest},
			[]Edit{SetKustomizeImage{File: kf, Name: repo, Digest: digest}}, ""},
		{"an entry matched by newName, edited under its name", "images:\n  - {name: api, newName: " + repo + ", newTag: 1.0.5}\n", ImageChange{Dir: "overlays/dev", Kind: "Deployment", Name: "api", Repository: repo, Tag: "1.1.0"},
			[]Edit{SetKustomizeImage{File: kf, Name: "api", NewTag: "1.1.0"}}, ""},
		{"an init container", "", ImageChange{Dir: "overlays/dev", Kind: "Deployment", Name: "api", Repository: "reg.example/acme/migrate", Tag: "1.1.0"},
			[]Edit{SetKustomizeImage{File: kf, Name: "reg.example/acme/migrate", NewTag: "1.1.0"}}, ""},
		{"a CronJob", "", ImageChange{Dir: "overlays/dev", Kind: "CronJob", Name: "report", Repository: repo, Tag: "1.1.0"},
			[]Edit{SetKustomizeImage{File: kf, Name: repo, NewTag: "1.1.0"}}, ""},
		{"no container of the repository", "", ImageChange{Dir: "overlays/dev", Kind: "Deployment", Name: "api", Repository: "reg.example/acme/other", Tag: "1.1.0"},
			nil, `has image "", not of reg.example/acme/other`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Locate(tree(tc.overlay), tc.change, 0)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("Locate = %v, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Locate: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Locate (-want +got):\n%s", diff)
			}
		})
	}
}
