package deployplan

import (
	"context"
	iofs "io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/hanzoai/deploy-web/demo"
)

// budgetCase is a repository (files by path) and the folder to render.
type budgetCase struct {
	name, dir string
	files     map[string]string
}

// budgetCases are the demo repository's overlays and the 47-object
// project of BenchmarkPlan47 (benchProject).
func budgetCases(tb testing.TB) []budgetCase {
	tb.Helper()
	dir := tb.TempDir()
	benchProject(tb, dir)
	rfs, err := repoFSFromDir(context.Background(), dir, Limits{})
	if err != nil {
		tb.Fatal(err)
	}
	project := map[string]string{}
	if err := rfs.fs.Walk(memRoot, func(p string, info iofs.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := rfs.fs.FileSystem.ReadFile(p)
		project[relRepo(p)] = string(data)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return []budgetCase{
		{"demo-dev", "overlays/dev", demo.ManifestFiles()},
		{"demo-prod", "overlays/prod", demo.ManifestFiles()},
		{"project47", "m", project},
	}
}

// renderPlain renders c with kustomize alone on a plain in-memory file
// system: no kustomization checks, no budget.
func renderPlain(tb testing.TB, c budgetCase) []*unstructured.Unstructured {
	fs := filesys.MakeFsInMemory()
	for p, data := range c.files {
		if err := fs.WriteFile(memRoot+"/"+p, []byte(data)); err != nil {
			tb.Fatal(err)
		}
	}
	objs, err := kustomize(fs, memRoot+"/"+c.dir)
	if err != nil {
		tb.Fatal(err)
	}
	return objs
}

// renderBudgeted renders c as a render does (renderFS); with budget
// false every file is marked as already checked, which is the render
// before the budget (the kustomization checks, then kustomize).
func renderBudgeted(tb testing.TB, c budgetCase, budget bool) []*unstructured.Unstructured {
	rfs := newRepoFS(context.Background(), "bench", Limits{})
	for p, data := range c.files {
		if err := rfs.fs.FileSystem.WriteFile(memRoot+"/"+p, []byte(data)); err != nil {
			tb.Fatal(err)
		}
		rfs.fs.checked[memRoot+"/"+p] = !budget
	}
	objs, err := renderFS(context.Background(), rfs, memRoot+"/"+c.dir)
	if err != nil {
		tb.Fatal(err)
	}
	return objs
}

// TestBudgetKeepsRenders: the demo repository and an ordinary kustomize
// project render the same objects through the budget as kustomize alone
// renders them.
func TestBudgetKeepsRenders(t *testing.T) {
	for _, c := range budgetCases(t) {
		t.Run(c.name, func(t *testing.T) {
			want, got := renderPlain(t, c), renderBudgeted(t, c, true)
			if len(want) == 0 {
				t.Fatalf("kustomize rendered nothing of %s", c.name)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("render of %s through the budget (-kustomize alone +budget):\n%s", c.name, d)
			}
		})
	}
}

// BenchmarkRenderBudget renders each budgetCase three ways:
//
//   - kustomize: kustomize alone on a plain in-memory file system, the
//     floor of any render;
//   - unbudgeted: the render before the budget (renderFS with every file
//     marked as already checked: the kustomization checks, then kustomize);
//   - budget: what a render does now (renderFS: the kustomization checks,
//     every file read through budgetFS, then kustomize).
//
// Run it with
//
//	go test -tags kustomize_disable_go_plugin_support -run '^$' -bench BenchmarkRenderBudget -benchmem -count 10 -cpu 1 ./deployplan/
//
// budget over unbudgeted is the cost of the YAML budget.
func BenchmarkRenderBudget(b *testing.B) {
	for _, c := range budgetCases(b) {
		b.Run(c.name+"/kustomize", func(b *testing.B) {
			for b.Loop() {
				renderPlain(b, c)
			}
		})
		b.Run(c.name+"/unbudgeted", func(b *testing.B) {
			for b.Loop() {
				renderBudgeted(b, c, false)
			}
		})
		b.Run(c.name+"/budget", func(b *testing.B) {
			for b.Loop() {
				renderBudgeted(b, c, true)
			}
		})
	}
}
