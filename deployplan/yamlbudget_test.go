package deployplan

import (
	"context"
	"errors"
	"fmt"
	"github.com/hanzoai/deploy-web/envconfig"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"time"
)

// aliasBomb is the ConfigMap of issue 26: data.l0 a sequence of width
// scalars, each next level width aliases of the one before.
func aliasBomb(levels, width int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n")
	b.WriteString("  l0: &l0 [" + strings.TrimSuffix(strings.Repeat("a,", width), ",") + "]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), width), ","))
	}
	return b.String()
}

// mergeKeyBomb nests merge keys: each level's mapping merges the level
// before nine times over, under nine keys, as <<: *m or, with list, as
// <<: [*m, *m].
func mergeKeyBomb(levels int, list bool) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n")
	b.WriteString("  m0: &m0 {k0: a, k1: a, k2: a, k3: a, k4: a, k5: a, k6: a, k7: a, k8: a}\n")
	for i := 1; i < levels; i++ {
		merge := fmt.Sprintf("*m%d", i-1)
		if list {
			merge = fmt.Sprintf("[*m%d, *m%d]", i-1, i-1)
		}
		var keys []string
		for j := range 9 {
			keys = append(keys, fmt.Sprintf("n%d: {<<: %s}", j, merge))
		}
		fmt.Fprintf(&b, "  m%d: &m%d {%s}\n", i, i, strings.Join(keys, ", "))
	}
	return b.String()
}

// indent indents every line of s by n spaces.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pad) + "\n"
}

// heapPeak runs f and returns the highest heap in use it reached above the
// heap before it (sampled every millisecond), in bytes.
func heapPeak(f func()) uint64 {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var mx uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			mx = max(mx, m.HeapAlloc)
			select {
			case <-stop:
				peak <- mx
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	mx := <-peak
	if mx < before.HeapAlloc {
		return 0
	}
	return mx - before.HeapAlloc
}

// maxBombHeap bounds the heap a refused bomb may cost a render.
const maxBombHeap = 64 << 20

// TestRenderRefusesYAMLBombs renders, from a folder and from git, sources
// holding the hostile shapes themselves in every place kustomize reads
// YAML: each is refused with a *TooComplexError naming the file (or the
// inline patch) before kustomize expands anything, and the heap stays
// under maxBombHeap. Without the budget the five-level bomb alone costs
// kustomize ~85 MB of heap and 180 MB of allocations, one level more ~9x.
func TestRenderRefusesYAMLBombs(t *testing.T) {
	bomb := aliasBomb(5, 9)
	deep := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata:\n  x: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n"
	dense := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dense}\ndata:\n  x: [" + strings.Repeat("a,", 250_000) + "a]\n"
	large := okCM + strings.Repeat("# padding\n", 210_000)
	patch := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + strings.SplitN(bomb, "data:\n", 2)[1]
	tests := []struct {
		name     string
		files    map[string]string
		lim      envconfig.Limits
		wantFile string
		want     string
	}{
		{name: "sequence aliases in a resource (issue 26)", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml, bomb.yaml]\n", "k/bomb.yaml": bomb},
			wantFile: "k/bomb.yaml", want: "aliases expand it to 74,7"},
		{name: "mapping merge keys <<: *a", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml, bomb.yaml]\n", "k/bomb.yaml": mergeKeyBomb(5, false)},
			wantFile: "k/bomb.yaml", want: "added by aliases"},
		{name: "merge key lists <<: [*a, *b]", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml, bomb.yaml]\n", "k/bomb.yaml": mergeKeyBomb(5, true)},
			wantFile: "k/bomb.yaml", want: "added by aliases"},
		{name: "third document of a stream", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml, bomb.yaml]\n", "k/bomb.yaml": okCM + "---\n" + strings.ReplaceAll(okCM, "name: c", "name: d") + "---\n" + bomb},
			wantFile: "k/bomb.yaml", want: "added by aliases"},
		{name: "deep nesting without aliases", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml, deep.yaml]\n", "k/deep.yaml": deep},
			wantFile: "k/deep.yaml", want: "nests 5,003 levels deep"},
		{name: "dense nodes over limits.maxYAMLNodes", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml, dense.yaml]\n", "k/dense.yaml": dense},
			wantFile: "k/dense.yaml", want: "limits.maxYAMLNodes"},
		{name: "a file over 2 MiB", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml, large.yaml]\n", "k/large.yaml": large},
			wantFile: "k/large.yaml", want: "the limit for a file read as YAML is 2,097,152"},
		{name: "many files over limits.maxYAMLNodes together", lim: envconfig.Limits{MaxYAMLNodes: 40},
			files:    map[string]string{"k/kustomization.yaml": "resources: [cm.yaml, a.yaml, b.yaml]\n", "k/a.yaml": strings.ReplaceAll(okCM, "name: c", "name: a"), "k/b.yaml": strings.ReplaceAll(okCM, "name: c", "name: b")},
			wantFile: "k/b.yaml", want: "more than 40 YAML nodes"},
		{name: "the kustomization itself", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml]\ncommonAnnotations:\n" + indent(strings.SplitN(bomb, "data:\n", 2)[1], 0)},
			wantFile: "k/kustomization.yaml", want: "added by aliases"},
		{name: "a base's kustomization", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml, ../base]\n", "base/kustomization.yaml": "resources: []\nx:\n" + strings.SplitN(bomb, "data:\n", 2)[1]},
			wantFile: "base/kustomization.yaml", want: "added by aliases"},
		{name: "a component", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml]\ncomponents: [../comp]\n", "comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [bomb.yaml]\n", "comp/bomb.yaml": bomb},
			wantFile: "comp/bomb.yaml", want: "added by aliases"},
		{name: "patches path", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml]\npatches: [{path: p.yaml}]\n", "k/p.yaml": patch},
			wantFile: "k/p.yaml", want: "added by aliases"},
		{name: "patchesStrategicMerge file", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml]\npatchesStrategicMerge: [p.yaml]\n", "k/p.yaml": patch},
			wantFile: "k/p.yaml", want: "added by aliases"},
		{name: "inline patch", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- patch: |\n" + indent(patch, 4)},
			wantFile: "k/kustomization.yaml patches[0]", want: "added by aliases"},
		{name: "inline patchesStrategicMerge", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml]\npatchesStrategicMerge:\n- |\n" + indent(patch, 4)},
			wantFile: "k/kustomization.yaml patchesStrategicMerge[0]", want: "added by aliases"},
		{name: "crds", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml]\ncrds: [crd.yaml]\n", "k/crd.yaml": bomb},
			wantFile: "k/crd.yaml", want: "added by aliases"},
		{name: "configurations", files: map[string]string{"k/kustomization.yaml": "resources: [cm.yaml]\nconfigurations: [c.yaml]\n", "k/c.yaml": bomb},
			wantFile: "k/c.yaml", want: "added by aliases"},
	}
	for _, tt := range tests {
		for _, mode := range []string{"local", "git"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				files := map[string]string{"k/cm.yaml": okCM, "catalog.json": `{"commit": "` + commitA + `", "services": []}`}
				for p, c := range tt.files {
					files[p] = c
				}
				writeFiles(t, dir, files)
				env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "k"}, Catalog: "catalog.json", ConfigDir: dir, Limits: tt.lim}
				if mode == "git" {
					commitAll(t, dir)
					env = &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "k"}, Catalog: "catalog.json", Limits: tt.lim}
				}
				var err error
				peak := heapPeak(func() { _, err = Render(context.Background(), env) })
				var tc *TooComplexError
				if !errors.As(err, &tc) {
					t.Fatalf("Render = %v, want a *TooComplexError", err)
				}
				if tc.File != tt.wantFile || !strings.Contains(tc.Reason, tt.want) {
					t.Errorf("Render error = %v; want file %q and %q in the reason", err, tt.wantFile, tt.want)
				}
				if !strings.Contains(err.Error(), BlockerYAMLTooComplex) {
					t.Errorf("Render error = %q, want the blocker id %s in it", err, BlockerYAMLTooComplex)
				}
				if peak > maxBombHeap {
					t.Errorf("Render heap peak = %d MiB, want under %d MiB", peak>>20, maxBombHeap>>20)
				}
			})
		}
	}
}

// TestRenderKeepsGeneratorSourcesRaw: a configMapGenerator's files and env
// files are data, never parsed as YAML by kustomize, so a file there that
// would be over the budget as YAML renders (it becomes a string); the same
// file named as a resource as well is checked.
func TestRenderKeepsGeneratorSourcesRaw(t *testing.T) {
	bomb := aliasBomb(5, 9)
	for _, tt := range []struct {
		name    string
		kust    string
		refused bool
	}{
		{"files", "resources: [cm.yaml]\nconfigMapGenerator: [{name: g, files: [bomb.yaml]}]\n", false},
		{"keyed files", "resources: [cm.yaml]\nconfigMapGenerator: [{name: g, files: [k=bomb.yaml]}]\n", false},
		{"secretGenerator files", "resources: [cm.yaml]\nsecretGenerator: [{name: g, files: [bomb.yaml]}]\n", false},
		{"also a resource", "resources: [cm.yaml, bomb.yaml]\nconfigMapGenerator: [{name: g, files: [bomb.yaml]}]\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"k/kustomization.yaml": tt.kust, "k/cm.yaml": okCM, "k/bomb.yaml": bomb,
				"catalog.json": `{"commit": "` + commitA + `", "services": []}`})
			env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "k"}, Catalog: "catalog.json", ConfigDir: dir}
			r, err := Render(context.Background(), env)
			var tc *TooComplexError
			if got := errors.As(err, &tc); got != tt.refused {
				t.Fatalf("Render(%s) = %v, want refused %v", tt.name, err, tt.refused)
			}
			if !tt.refused && len(r.Objects) != 2 {
				t.Errorf("Render(%s) = %d objects, want 2", tt.name, len(r.Objects))
			}
		})
	}
}

// TestRenderUnderBudgetIsBounded: the largest alias expansion the budget
// lets through (the four-level bomb, 8,261 nodes added, under the 10,000
// limit) renders, and kustomize's heap stays under maxBombHeap.
func TestRenderUnderBudgetIsBounded(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"k/kustomization.yaml": "resources: [bomb.yaml]\n", "k/bomb.yaml": aliasBomb(4, 9),
		"catalog.json": `{"commit": "` + commitA + `", "services": []}`})
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "k"}, Catalog: "catalog.json", ConfigDir: dir}
	var err error
	peak := heapPeak(func() { _, err = Render(context.Background(), env) })
	if err != nil {
		t.Fatalf("Render(four-level bomb) = %v, want it rendered", err)
	}
	if peak > maxBombHeap {
		t.Errorf("Render(four-level bomb) heap peak = %d MiB, want under %d MiB", peak>>20, maxBombHeap>>20)
	}
}

// TestSourcePlanShowsYAMLTooComplex: source-plan reports the file over its
// budget as its yaml-too-complex divergence, not an error.
func TestSourcePlanShowsYAMLTooComplex(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"k/kustomization.yaml": "resources: [bomb.yaml]\n", "k/bomb.yaml": aliasBomb(5, 9),
		"catalog.json": `{"commit": "` + commitA + `", "services": []}`})
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "k"}, Catalog: "catalog.json", ConfigDir: dir}
	res, err := SourcePlan(context.Background(), env, Options{})
	if err != nil {
		t.Fatalf("SourcePlan = %v, want a result with the divergence", err)
	}
	if len(res.Divergences) != 1 {
		t.Fatalf("SourcePlan divergences = %+v, want one", res.Divergences)
	}
	d := res.Divergences[0]
	if d.ID != BlockerYAMLTooComplex || len(d.Affected) != 1 || d.Affected[0] != "k/bomb.yaml" || !strings.HasPrefix(d.Message, "k/bomb.yaml: aliases expand it to 74,7") {
		t.Errorf("SourcePlan divergence = %+v, want %s naming k/bomb.yaml and the expansion", d, BlockerYAMLTooComplex)
	}
}

// TestBudgetFSStopsAnAbandonedRender: once the render's context is done,
// every read fails, so kustomize stops at its next file access.
func TestBudgetFSStopsAnAbandonedRender(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rfs := newRepoFS(ctx, "test", envconfig.Limits{})
	if err := rfs.write("k/cm.yaml", []byte(okCM)); err != nil {
		t.Fatal(err)
	}
	if _, err := rfs.fs.ReadFile("/repo/k/cm.yaml"); err != nil {
		t.Fatalf("ReadFile before the deadline = %v", err)
	}
	cancel()
	for name, read := range map[string]func() error{
		"ReadFile": func() error { _, err := rfs.fs.ReadFile("/repo/k/cm.yaml"); return err },
		"Open":     func() error { _, err := rfs.fs.Open("/repo/k/cm.yaml"); return err },
		"ReadDir":  func() error { _, err := rfs.fs.ReadDir("/repo/k"); return err },
		"Glob":     func() error { _, err := rfs.fs.Glob("/repo/k/*"); return err },
		"Walk":     func() error { return rfs.fs.Walk("/repo", func(string, fs.FileInfo, error) error { return nil }) },
	} {
		if err := read(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s after cancel = %v, want context.Canceled", name, err)
		}
	}
	rfs2 := newRepoFS(ctx, "test", envconfig.Limits{})
	rfs2.write("k/kustomization.yaml", []byte("resources: [cm.yaml]\n"))
	rfs2.write("k/cm.yaml", []byte(okCM))
	if _, err := kustomize(rfs2.fs, "/repo/k"); !errors.Is(rfs2.fs.live(), context.Canceled) || err == nil {
		t.Errorf("kustomize on an abandoned render = %v, want it to fail", err)
	}
}
