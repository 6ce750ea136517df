//go:build unix

package deployplan

import (
	"context"
	iofs "io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/hanzoai/deploy-web/demo"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/yamlbudget"
)

// budgetCase is a repository (files by path) and the folder to render.
type budgetCase struct {
	name, dir, catalog string
	files              map[string]string
}

// helm reports whether c's folder inflates Helm charts (helmCharts:),
// which kustomize alone cannot render.
func (c budgetCase) helm() bool {
	return strings.Contains(c.files[c.dir+"/kustomization.yaml"], "helmCharts:")
}

// budgetCases are the demo repository's overlays and the 47-object
// project of BenchmarkPlan47 (benchProject).
func budgetCases(tb testing.TB) []budgetCase {
	tb.Helper()
	dir := tb.TempDir()
	benchProject(tb, dir)
	rfs, err := repoFSFromDir(context.Background(), dir, envconfig.Limits{})
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
		{"demo-dev", "overlays/dev", "artifacts/catalog.json", demo.ManifestFiles()},
		{"demo-prod", "overlays/prod", "artifacts/catalog-prod.json", demo.ManifestFiles()},
		{"project47", "m", "catalog.json", project},
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
	objs, _ := renderBudgetedFS(tb, c, budget)
	return objs
}

// renderBudgetedFS is renderBudgeted, also returning the file system.
func renderBudgetedFS(tb testing.TB, c budgetCase, budget bool) ([]*unstructured.Unstructured, *budgetFS) {
	rfs := newRepoFS(context.Background(), "bench", envconfig.Limits{})
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
	return objs, rfs.fs
}

// TestBudgetKeepsRenders: the demo repository and an ordinary kustomize
// project render the same objects through the budget as kustomize alone
// renders them.
func TestBudgetKeepsRenders(t *testing.T) {
	for _, c := range budgetCases(t) {
		t.Run(c.name, func(t *testing.T) {
			// kustomize alone renders no Helm chart (deploy-web renders
			// them in-process): a folder with helmCharts compares with
			// the render before the budget instead.
			want := renderBudgeted(t, c, false)
			if !c.helm() {
				want = renderPlain(t, c)
			}
			got := renderBudgeted(t, c, true)
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
//	go test -tags kustomize_disable_go_plugin_support -run '^$' -bench BenchmarkRenderBudget -benchmem -count 5 -cpu 1 ./deployplan/
//
// budget over unbudgeted is the cost of the YAML budget. On a shared
// machine the three drift apart by more than that cost, so share measures
// it within each iteration: the render before the budget, then
// yamlbudget.Check of every file a budgeted render reads, reported as
// budget-% (the check's CPU time over the render's); share-of-Render
// does the same around the whole Render from git, which includes the
// check, so there budget-% is the check over the rest of the render.
func BenchmarkRenderBudget(b *testing.B) {
	for _, c := range budgetCases(b) {
		b.Run(c.name+"/kustomize", func(b *testing.B) {
			if c.helm() {
				b.Skip("kustomize alone renders no Helm chart")
			}
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
		read := budgetRead(b, c)
		b.Run(c.name+"/share", func(b *testing.B) {
			budgetShare(b, read, false, func() { renderBudgeted(b, c, false) })
		})
		// The whole render the console runs: from git (file://), the
		// catalog included; the budget is part of it, so share is the
		// check over the whole.
		dir := b.TempDir()
		writeFiles(b, dir, c.files)
		commitAll(b, dir)
		env := &envconfig.Environment{Name: "dev", Namespace: "staging", Catalog: c.catalog,
			Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: c.dir}}
		b.Run(c.name+"/share-of-Render", func(b *testing.B) {
			budgetShare(b, read, true, func() {
				if _, err := Render(context.Background(), env); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// budgetRead returns the files a budgeted render of c reads, by path.
func budgetRead(b *testing.B, c budgetCase) map[string][]byte {
	_, fs := renderBudgetedFS(b, c, true)
	read := map[string][]byte{}
	for p := range fs.checked {
		if strings.HasPrefix(p, "inline:") {
			continue
		}
		data, err := fs.FileSystem.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		read[p] = data
	}
	return read
}

// budgetShare runs render, then yamlbudget.Check of every file of read,
// each iteration, and reports the checks' CPU time over the render's as
// budget-% (over the render's less the checks' when the render includes
// them). CPU time (of the process: run with -cpu 1, so one goroutine
// runs at a time) rather than wall time, because on a shared machine the
// wall time of a few milliseconds swings by more than the share.
func budgetShare(b *testing.B, read map[string][]byte, includesCheck bool, render func()) {
	var rendering, checking time.Duration
	for b.Loop() {
		t0 := cpuTime(b)
		render()
		t1 := cpuTime(b)
		for p, data := range read {
			if _, err := yamlbudget.Check(p, data, yamlbudget.Budget{}); err != nil {
				b.Fatal(err)
			}
		}
		checking += cpuTime(b) - t1
		rendering += t1 - t0
	}
	if includesCheck {
		rendering -= checking
	}
	b.ReportMetric(100*float64(checking)/float64(rendering), "budget-%")
	b.ReportMetric(float64(len(read)), "files")
}

// cpuTime is the process's CPU time so far (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
