package deployplan

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/yamlbudget"
)

// BlockerYAMLTooComplex is the id of the blocker of a source file over its
// parsing budget (TooComplexError).
const BlockerYAMLTooComplex = "yaml-too-complex"

// TooComplexError is a file of the source whose YAML would
// cost too much to decode: nested aliases that expand to millions of
// nodes, too many nodes, too deep. It is found before any decoder that
// expands aliases reads the file; nothing was rendered.
type TooComplexError struct {
	// File is the file, relative to the repository ("k/bomb.yaml"), or an
	// inline patch ("k/kustomization.yaml patches[0]").
	File string
	// Reason says what is over which limit and what to do.
	Reason string
}

func (e *TooComplexError) Error() string { return "deployplan: " + e.Public() }

// Public is the refusal in words a user may read.
func (e *TooComplexError) Public() string {
	return fmt.Sprintf("%s is too complex to decode (%s): %s", e.File, BlockerYAMLTooComplex, e.Reason)
}

// Blocker is the error as the plan's blocker.
func (e *TooComplexError) Blocker() Blocker {
	return Blocker{ID: BlockerYAMLTooComplex, Message: e.File + ": " + e.Reason, Affected: []string{e.File},
		UnblockHint: "fix the file in the repository (nothing of the source was rendered): " + e.Reason}
}

// tooComplex turns a yamlbudget error into a *TooComplexError naming file.
func tooComplex(file string, err error) error {
	var be *yamlbudget.Error
	if errors.As(err, &be) {
		return &TooComplexError{File: file, Reason: be.Reason}
	}
	return err
}

// budgetFS is the file system every YAML decoder of a render reads
// through (kustomize, the kustomization checker, the git tree reader): each
// file is checked against its YAML budget the first time it
// is read, before its bytes are returned, and all the files read count
// against limits.maxYAMLNodes. Every read first checks the render's
// context, so an abandoned render fails at its next file access.
//
// The sources of configMapGenerator and secretGenerator (files, envs, env)
// are exempt when nothing else names them (setRaw): kustomize copies a
// file source into the ConfigMap as a string and reads an env file as
// KEY=VALUE lines, never as YAML, so a large JSON dashboard there costs
// what its bytes cost.
type budgetFS struct {
	filesys.FileSystem
	ctx      context.Context
	maxNodes int64

	mu      sync.Mutex
	nodes   int64
	checked map[string]bool
	raw     map[string]bool
	err     error // the first budget error: kustomize may wrap it in text
}

func newBudgetFS(ctx context.Context, lim envconfig.Limits) *budgetFS {
	return &budgetFS{FileSystem: filesys.MakeFsInMemory(), ctx: ctx, maxNodes: lim.MaxYAMLNodesOrDefault(),
		checked: map[string]bool{}, raw: map[string]bool{}}
}

// failed returns the first budget error of the render, nil if none.
func (f *budgetFS) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// setRaw marks in-memory paths as generator sources read as raw data.
func (f *budgetFS) setRaw(paths []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range paths {
		f.raw[path.Clean(p)] = true
	}
}

// live fails once the render's context is done.
func (f *budgetFS) live() error {
	if err := f.ctx.Err(); err != nil {
		return fmt.Errorf("deployplan: render abandoned: %w", err)
	}
	return nil
}

// check checks data, the content of in-memory path p (or an inline
// document named name), once.
func (f *budgetFS) check(p, name string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if f.checked[p] || f.raw[p] {
		return nil
	}
	st, err := yamlbudget.Check(name, data, yamlbudget.Budget{})
	if err != nil {
		f.err = tooComplex(name, err)
		return f.err
	}
	f.checked[p] = true
	f.nodes += st.Expanded
	if f.nodes > f.maxNodes {
		f.err = &TooComplexError{File: name, Reason: fmt.Sprintf(
			"with it the files of this render hold more than %d YAML nodes, aliases expanded (limits.maxYAMLNodes): render fewer or smaller files, or raise limits.maxYAMLNodes",
			f.maxNodes)}
		return f.err
	}
	return nil
}

// checkInline checks a document held inside a file (an inline patch of a
// kustomization), under the name "file field[i]".
func (f *budgetFS) checkInline(name string, data []byte) error {
	return f.check("inline:"+name, name, data)
}

// ReadFile returns the file's content once it passed its budget.
func (f *budgetFS) ReadFile(p string) ([]byte, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	data, err := f.FileSystem.ReadFile(p)
	if err != nil {
		return nil, err
	}
	p = path.Clean(p)
	if err := f.check(p, relRepo(p), data); err != nil {
		return nil, err
	}
	return data, nil
}

// Open opens the file once its content passed its budget.
func (f *budgetFS) Open(p string) (filesys.File, error) {
	if _, err := f.ReadFile(p); err != nil {
		return nil, err
	}
	return f.FileSystem.Open(p)
}

// ReadDir lists a folder of a live render.
func (f *budgetFS) ReadDir(p string) ([]string, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	return f.FileSystem.ReadDir(p)
}

// Glob matches in a live render.
func (f *budgetFS) Glob(pattern string) ([]string, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	return f.FileSystem.Glob(pattern)
}

// Walk walks a live render's tree.
func (f *budgetFS) Walk(p string, fn filepath.WalkFunc) error {
	if err := f.live(); err != nil {
		return err
	}
	return f.FileSystem.Walk(p, fn)
}
