package deployplan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hanzoai/deploy-web/envconfig"
)

// shimPATH puts recording git, ssh, sh, bash, helm and kustomize programs
// first on PATH; each appends its name and arguments to the returned log
// file. The log must not exist after any render.
func shimPATH(t *testing.T) (logFile string) {
	t.Helper()
	dir := t.TempDir()
	logFile = filepath.Join(t.TempDir(), "exec.log")
	for _, name := range []string{"git", "ssh", "sh", "bash", "helm", "kustomize", "git-upload-pack"} {
		script := fmt.Sprintf("#!/bin/sh\necho %s \"$@\" >> %s\nexit 1\n", name, logFile)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if p, err := exec.LookPath("git"); err != nil || p != filepath.Join(dir, "git") {
		t.Fatalf("LookPath(git) = %q, %v; want the shim in %s", p, err, dir)
	}
	return logFile
}

// hangListener accepts connections and never answers; it counts them.
func hangListener(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int64{}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(done)
				return
			}
			accepted.Add(1)
			conns = append(conns, c) // held open, never answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), accepted
}

const okCM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {n: \"1\"}\n"

// commitAll commits everything in dir (a new repository) on branch master.
func commitAll(t testing.TB, dir string) string {
	t.Helper()
	repo, err := git.PlainInit(dir, false)
	if errors.Is(err, git.ErrRepositoryAlreadyExists) {
		repo, err = git.PlainOpen(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddGlob("."); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("c", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// TestRenderRefusesRemoteAndExec renders, locally and from git, overlays
// that name a remote, an exec-capable feature or a path out of the
// repository in every field kustomize reads: each is refused with a
// *KustomizationError naming the file and the entry, and nothing is run
// (recording shims first on PATH) or connected to (a listener that never
// answers). A normal overlay renders under the same shims.
func TestRenderRefusesRemoteAndExec(t *testing.T) {
	logFile := shimPATH(t)
	hang, accepted := hangListener(t)
	proof := filepath.Join(t.TempDir(), "proof")
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.yaml": okCM, "kustomization.yaml": "resources: [secret.yaml]\n"})

	const remote = reasonRemote
	tests := []struct {
		name       string
		kust       string // overlays/dev/kustomization.yaml
		extra      map[string]string
		symlink    string // overlays/dev/link.yaml -> this (absolute or relative)
		wantFile   string
		wantField  string
		wantEntry  string
		wantReason string
	}{
		{name: "upload-pack injection (the reported exploit)",
			kust:     "resources:\n- \"file:///x?ref=--upload-pack=touch%20" + proof + "\"\n",
			wantFile: "overlays/dev/kustomization.yaml", wantField: "resources", wantEntry: "file:///x?ref=--upload-pack=touch%20" + proof, wantReason: remote},
		{name: "http resource that never answers", kust: "resources: [\"http://" + hang + "/cm.yaml\"]\n",
			wantField: "resources", wantEntry: "http://" + hang + "/cm.yaml", wantReason: remote},
		{name: "https resource", kust: "resources: [https://example.com/cm.yaml]\n", wantField: "resources", wantReason: remote},
		{name: "git:: prefix", kust: "resources: [\"git::https://github.com/org/repo//base?ref=main\"]\n", wantField: "resources", wantReason: remote},
		{name: "github shorthand", kust: "resources: [\"github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v1.0.6\"]\n", wantField: "resources", wantReason: remote},
		{name: "ssh URL", kust: "resources: [\"ssh://git@github.com/org/repo.git\"]\n", wantField: "resources", wantReason: remote},
		{name: "scp-like", kust: "resources: [\"git@github.com:org/repo.git/base\"]\n", wantField: "resources", wantReason: remote},
		{name: "user@host", kust: "resources: [\"deploy@" + hang + "/repo\"]\n", wantField: "resources", wantReason: remote},
		{name: "bases", kust: "bases: [\"https://github.com/org/repo//base\"]\n", wantField: "bases", wantReason: remote},
		{name: "components", kust: "components: [\"https://github.com/org/repo//comp\"]\n", wantField: "components", wantReason: remote},
		{name: "patches path", kust: "resources: [cm.yaml]\npatches: [{path: \"http://" + hang + "/p.yaml\"}]\n", wantField: "patches", wantReason: remote},
		{name: "patchesStrategicMerge", kust: "resources: [cm.yaml]\npatchesStrategicMerge: [\"http://" + hang + "/p.yaml\"]\n", wantField: "patchesStrategicMerge", wantReason: remote},
		{name: "patchesJson6902", kust: "resources: [cm.yaml]\npatchesJson6902: [{target: {version: v1, kind: ConfigMap, name: c}, path: \"http://" + hang + "/p.yaml\"}]\n", wantField: "patchesJson6902", wantReason: remote},
		{name: "replacements path", kust: "resources: [cm.yaml]\nreplacements: [{path: \"https://example.com/r.yaml\"}]\n", wantField: "replacements", wantReason: remote},
		{name: "configMapGenerator files", kust: "configMapGenerator: [{name: g, files: [\"http://" + hang + "/f\"]}]\n", wantField: "configMapGenerator files", wantReason: remote},
		{name: "configMapGenerator keyed file", kust: "configMapGenerator: [{name: g, files: [\"k=http://" + hang + "/f\"]}]\n", wantField: "configMapGenerator files", wantReason: remote},
		{name: "configMapGenerator envs", kust: "configMapGenerator: [{name: g, envs: [\"http://" + hang + "/e\"]}]\n", wantField: "configMapGenerator envs", wantReason: remote},
		{name: "secretGenerator env", kust: "secretGenerator: [{name: g, env: \"http://" + hang + "/e\"}]\n", wantField: "secretGenerator env", wantReason: remote},
		{name: "crds", kust: "resources: [cm.yaml]\ncrds: [\"http://" + hang + "/crd.json\"]\n", wantField: "crds", wantReason: remote},
		{name: "configurations", kust: "resources: [cm.yaml]\nconfigurations: [\"http://" + hang + "/c.yaml\"]\n", wantField: "configurations", wantReason: remote},
		{name: "openapi", kust: "resources: [cm.yaml]\nopenapi: {path: \"http://" + hang + "/schema.json\"}\n", wantField: "openapi", wantReason: remote},
		{name: "helmCharts repo", kust: "helmCharts: [{name: x, repo: \"http://" + hang + "/charts\", version: 1.0.0}]\n", wantField: "helmCharts", wantEntry: "x", wantReason: reasonHelmRepo},
		{name: "helmCharts OCI repo", kust: "helmCharts: [{name: x, repo: \"oci://" + hang + "/charts\", version: 1.0.0}]\n", wantField: "helmCharts", wantEntry: "x", wantReason: reasonHelmRepo},
		{name: "helmGlobals remote chartHome", kust: "helmGlobals: {chartHome: \"https://" + hang + "/charts\"}\nhelmCharts: [{name: x}]\n", wantField: "helmGlobals.chartHome", wantReason: remote},
		{name: "helmCharts chart outside the repository", kust: "helmGlobals: {chartHome: ../../../../../../../../..}\nhelmCharts: [{name: etc}]\n", wantField: "helmGlobals.chartHome", wantReason: reasonOutside},
		{name: "helmCharts remote values file", kust: "helmCharts: [{name: x, valuesFile: \"http://" + hang + "/v.yaml\"}]\n",
			extra:     map[string]string{"overlays/dev/charts/x/Chart.yaml": "apiVersion: v2\nname: x\nversion: 1.0.0\n"},
			wantField: "helmCharts valuesFile", wantReason: remote},
		{name: "helmChartInflationGenerator", kust: "helmChartInflationGenerator: [{chartName: x, chartRepoUrl: \"http://" + hang + "\"}]\n", wantField: "helmChartInflationGenerator", wantReason: reasonHelmGen},
		{name: "generators (exec plugin)", kust: "generators: [gen.yaml]\n",
			extra:     map[string]string{"overlays/dev/gen.yaml": "apiVersion: x/v1\nkind: G\nmetadata: {name: g, annotations: {config.kubernetes.io/function: \"exec: {path: /bin/sh}\"}}\n"},
			wantField: "generators", wantReason: reasonPlugins},
		{name: "transformers", kust: "resources: [cm.yaml]\ntransformers: [t.yaml]\n",
			extra:     map[string]string{"overlays/dev/t.yaml": "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: t}\npath: \"http://" + hang + "/p.yaml\"\n"},
			wantField: "transformers", wantReason: reasonPlugins},
		{name: "validators", kust: "resources: [cm.yaml]\nvalidators: [v.yaml]\n", extra: map[string]string{"overlays/dev/v.yaml": okCM},
			wantField: "validators", wantReason: reasonPlugins},
		{name: "remote in a base reached from the overlay", kust: "resources: [../../base]\n",
			extra:    map[string]string{"base/kustomization.yaml": "resources: [cm.yaml, \"https://example.com/x.yaml\"]\n", "base/cm.yaml": okCM},
			wantFile: "base/kustomization.yaml", wantField: "resources", wantEntry: "https://example.com/x.yaml", wantReason: remote},
		{name: "remote in a component", kust: "resources: [cm.yaml]\ncomponents: [../../comp]\n",
			extra:    map[string]string{"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches: [{path: \"https://example.com/p.yaml\"}]\n"},
			wantFile: "comp/kustomization.yaml", wantField: "patches", wantReason: remote},
		{name: "absolute path", kust: "resources: [/etc/hostname]\n", wantField: "resources", wantReason: reasonAbsolute},
		{name: "a base outside the repository", kust: "resources: [../../../../../../../../../../" + strings.TrimPrefix(outside, "/") + "]\n", wantField: "resources", wantReason: reasonOutside},
		{name: "a symbolic link out of the repository", kust: "resources: [link.yaml]\n", symlink: filepath.Join(outside, "secret.yaml"),
			wantField: "resources", wantEntry: "link.yaml"},
	}
	for _, tt := range tests {
		for _, mode := range []string{"local", "git"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				files := map[string]string{
					"overlays/dev/kustomization.yaml": tt.kust,
					"overlays/dev/cm.yaml":            okCM,
					"catalog.json":                    `{"commit": "` + commitA + `", "services": []}`,
				}
				for p, c := range tt.extra {
					files[p] = c
				}
				writeFiles(t, dir, files)
				if tt.symlink != "" {
					if err := os.Symlink(tt.symlink, filepath.Join(dir, "overlays/dev/link.yaml")); err != nil {
						t.Fatal(err)
					}
				}
				env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "overlays/dev"}, Catalog: "catalog.json", ConfigDir: dir}
				if mode == "git" {
					commitAll(t, dir)
					env = &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "overlays/dev"}, Catalog: "catalog.json"}
				}
				_, err := Render(context.Background(), env)
				var ke *KustomizationError
				if !errors.As(err, &ke) {
					t.Fatalf("Render = %v, want a *KustomizationError", err)
				}
				wantFile := tt.wantFile
				if wantFile == "" {
					wantFile = "overlays/dev/kustomization.yaml"
				}
				if ke.File != wantFile || ke.Field != tt.wantField {
					t.Errorf("Render error file, field = %q, %q; want %q, %q (%v)", ke.File, ke.Field, wantFile, tt.wantField, err)
				}
				if tt.wantEntry != "" && ke.Entry != tt.wantEntry {
					t.Errorf("Render error entry = %q, want %q", ke.Entry, tt.wantEntry)
				}
				if tt.wantReason != "" && ke.Reason != tt.wantReason {
					t.Errorf("Render error reason = %q, want %q", ke.Reason, tt.wantReason)
				}
				if tt.symlink != "" && !strings.Contains(ke.Reason, "symbolic link") {
					t.Errorf("Render error = %v, want it to name the symbolic link", err)
				}
				if !strings.HasPrefix(err.Error(), "deployplan: "+wantFile+": ") {
					t.Errorf("Render error = %q, want it to start with the kustomization file", err)
				}
			})
		}
	}

	// A normal overlay with a base, a component, patches and generators
	// renders under the same shims.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"base/kustomization.yaml":         "resources: [cm.yaml]\n",
		"base/cm.yaml":                    okCM,
		"comp/kustomization.yaml":         "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels: [{pairs: {c: \"1\"}}]\n",
		"overlays/dev/kustomization.yaml": "resources: [../../base]\ncomponents: [../../comp]\npatches: [{path: p.yaml}]\nconfigMapGenerator: [{name: g, files: [k=f.txt], envs: [e.env]}]\n",
		"overlays/dev/p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {n: \"2\"}\n",
		"overlays/dev/f.txt":              "hello",
		"overlays/dev/e.env":              "A=b\n",
		"catalog.json":                    `{"commit": "` + commitA + `", "services": []}`,
	})
	local := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "overlays/dev"}, Catalog: "catalog.json", ConfigDir: dir}
	if r, err := Render(context.Background(), local); err != nil || len(r.Objects) != 2 {
		t.Fatalf("Render(normal overlay, local) = %v, %v; want 2 objects", r, err)
	}
	commitAll(t, dir)
	gitEnv := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "overlays/dev"}, Catalog: "catalog.json"}
	if r, err := Render(context.Background(), gitEnv); err != nil || len(r.Objects) != 2 {
		t.Fatalf("Render(normal overlay, git) = %v, %v; want 2 objects", r, err)
	}

	if b, err := os.ReadFile(logFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a program ran while rendering: %q (err %v)", b, err)
	}
	if _, err := os.Stat(proof); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the injected command ran: %s exists", proof)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the never-answering server got %d connections, want 0", n)
	}
}

func TestIsRemoteRef(t *testing.T) {
	for in, want := range map[string]bool{
		"../base":                        false,
		"cm.yaml":                        false,
		"dir/with.git/x":                 false,
		"base//x":                        false,
		"https://example.com/a.yaml":     true,
		"HTTPS://example.com/a.yaml":     true,
		"file:///x?ref=--upload-pack=id": true,
		"git::https://x/y":               true,
		"GitHub.com/org/repo":            true,
		"git@github.com:org/repo":        true,
		"org/repo?ref=v1":                true,
		"gh:org/repo":                    true,
		"dev.azure.com/org/_git/repo":    true,
		" https://x/y":                   true,
	} {
		if got := isRemoteRef(in); got != want {
			t.Errorf("isRemoteRef(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestRenderRepoLimits: a repository over the file or byte limit is
// refused with the numbers, before its files are read.
func TestRenderRepoLimits(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/kustomization.yaml": "resources: [cm.yaml]\n",
		"k/cm.yaml":            okCM,
		"catalog.json":         `{"commit": "` + commitA + `", "services": []}`,
	})
	// 100 MiB (sparse: nothing to write) against the default limit.
	big := filepath.Join(dir, "k", "blob.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "k"}, Catalog: "catalog.json", ConfigDir: dir}
	_, err = Render(context.Background(), env)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Unit != "bytes" || tl.Max != envconfig.DefaultMaxRepoBytes || !strings.Contains(err.Error(), "more than 67108864 bytes") {
		t.Fatalf("Render(100 MiB folder) = %v, want a TooLargeError over %d bytes", err, envconfig.DefaultMaxRepoBytes)
	}
	if err := os.Remove(big); err != nil {
		t.Fatal(err)
	}

	commitAll(t, dir)
	for _, tt := range []struct {
		name  string
		lim   envconfig.Limits
		local bool
		unit  string
	}{
		{"files, local", envconfig.Limits{MaxRepoFiles: 2}, true, "files"},
		{"files, git", envconfig.Limits{MaxRepoFiles: 2}, false, "files"},
		{"bytes, local", envconfig.Limits{MaxRepoBytes: 100}, true, "bytes"},
		{"bytes, git", envconfig.Limits{MaxRepoBytes: 100}, false, "bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "k"}, Catalog: "catalog.json", Limits: tt.lim}
			if tt.local {
				env = &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "k"}, Catalog: "catalog.json", ConfigDir: dir, Limits: tt.lim}
			}
			_, err := Render(context.Background(), env)
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Unit != tt.unit {
				t.Fatalf("Render = %v, want a TooLargeError in %s", err, tt.unit)
			}
		})
		// Within the limits the same repository renders.
	}
	env = &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "k"}, Catalog: "catalog.json", Limits: envconfig.Limits{MaxRepoFiles: 3, MaxRepoBytes: 1000}}
	if _, err := Render(context.Background(), env); err != nil {
		t.Errorf("Render(within limits) = %v", err)
	}
}
