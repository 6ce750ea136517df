package gitops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/writeback"
)

// A write stays in its environment (the rule is here once; rollback,
// sync's edits, promotion and catalog moves all go through it):
//
//   - stayInEnv: the version edits of an App touch only files under the
//     environment's own source path. A version declared in a file outside
//     it (a shared base) is overridden in the overlay instead
//     (writeback.SetOverlayImage: an inline patch of the App's spec.image
//     that the overlay's kustomization owns, which a later write edits;
//     a workload's container image is changed by an images: entry of the
//     overlay, writeback.Locate's own choice).
//   - confine: before the push, every other environment of the
//     environments file that reads the same repository and branch is
//     rendered at the edited tree and compared with its render at the
//     tree the write started from; any change refuses the write
//     (ReachesOtherEnvironments), naming each environment and object, and
//     nothing is pushed. Another environment's catalog file in the
//     repository counts as one of its objects: a write that changes a
//     catalog several environments read is refused the same way.

// envDir is env's source path as a folder prefix ("overlays/dev/").
func envDir(env *envconfig.Environment) string {
	return strings.TrimSuffix(path.Clean(strings.TrimPrefix(env.Source.Path, "./")), "/") + "/"
}

// inEnv reports whether file is under env's source path.
func inEnv(env *envconfig.Environment, file string) bool {
	return strings.HasPrefix(path.Clean(file), envDir(env))
}

// stayInEnv is edits (Locate's, for change ch) with every App file
// outside env's folder replaced by the overlay's own override of the
// App's image.
func stayInEnv(tree fs.FS, env *envconfig.Environment, ch writeback.ImageChange, edits []writeback.Edit, maxFile int64) ([]writeback.Edit, error) {
	out := make([]writeback.Edit, 0, len(edits))
	for _, e := range edits {
		if inEnv(env, e.Target()) {
			out = append(out, e)
			continue
		}
		if _, ok := e.(writeback.SetAppImage); !ok {
			return nil, &sharedFileError{fmt.Sprintf("the version of %s is declared in %s, outside %s (environment %s's folder), and deploy-web cannot override it there: nothing was pushed",
				ch.Name, e.Target(), envDir(env), env.Name)}
		}
		o, err := writeback.OverlayOverride(tree, ch, maxFile)
		if err != nil {
			return nil, &locateError{err}
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// renders are the objects of each environment's render, each as JSON by
// "group/kind namespace/name" (a render that fails: its error under "").
type renders map[string]map[string]string

// neighbours are the environments other than env that read env's
// repository and branch.
func (s *Service) neighbours(env *envconfig.Environment) []*envconfig.Environment {
	if s.opts.Runs == nil || env.Source.Repo == "" {
		return nil
	}
	cfg := s.opts.Runs.Config()
	var out []*envconfig.Environment
	for i := range cfg.Environments {
		e := &cfg.Environments[i]
		if e.Name != env.Name && e.Source.Repo == env.Source.Repo && e.Source.Ref == env.Source.Ref {
			out = append(out, e)
		}
	}
	return out
}

// renderAll renders each environment from tree; an environment's
// catalog file in the repository counts as one of its objects ("catalog
// PATH"), so a write that changes another environment's catalog reaches
// it as surely as one that changes its objects.
func renderAll(ctx context.Context, envs []*envconfig.Environment, tree fs.FS) renders {
	out := renders{}
	for _, e := range envs {
		objs, err := deployplan.RenderFS(ctx, e, tree)
		m := map[string]string{}
		if err != nil {
			m[""] = "does not render"
		}
		if p, ok := e.CatalogInRepo(); ok {
			// A leading space: no object's key starts with one.
			m[" catalog "+p] = catalogDigest(tree, p)
		}
		for _, o := range objs {
			b, _ := json.Marshal(o.Object)
			m[objectKey(o, e.Namespace)] = string(b)
		}
		out[e.Name] = m
	}
	return out
}

// catalogDigest says what the file p of tree holds: its git blob id when
// the tree is git's (whatever its size), else the SHA-256 of its bytes;
// "absent" when there is none, and the error when it cannot be read (so a
// catalog unreadable on either side is never taken as unchanged).
func catalogDigest(tree fs.FS, p string) string {
	if bh, ok := tree.(interface{ BlobHash(string) (string, bool) }); ok {
		if h, ok := bh.BlobHash(p); ok {
			return "blob " + h
		}
	}
	f, err := tree.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		return fmt.Sprintf("unreadable %p: %v", tree, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Sprintf("unreadable %p: %v", tree, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func objectKey(o *unstructured.Unstructured, ns string) string {
	gvk := o.GroupVersionKind()
	if o.GetNamespace() != "" {
		ns = o.GetNamespace()
	}
	return strings.TrimPrefix(gvk.Group+"/", "/") + gvk.Kind + " " + ns + "/" + o.GetName()
}

// reachError compares the renders before and after: nil when no other
// environment's output changes.
func reachError(env *envconfig.Environment, before, after renders) error {
	var what []string
	names := make([]string, 0, len(before))
	for n := range before {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		b, a := before[n], after[n]
		var objs []string
		for k, v := range a {
			if b[k] != v {
				objs = append(objs, strings.TrimSpace(k))
			}
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				objs = append(objs, strings.TrimSpace(k))
			}
		}
		if len(objs) == 0 {
			continue
		}
		slices.Sort(objs)
		objs = slices.Compact(objs)
		for i, o := range objs {
			if o == "" {
				objs[i] = "its render"
			}
		}
		what = append(what, n+" ("+strings.Join(objs, ", ")+")")
	}
	if len(what) == 0 {
		return nil
	}
	return &Error{Kind: KindUnprocessable, Reason: "ReachesOtherEnvironments", Public: fmt.Sprintf(
		"the write to environment %s would change what other environments of the same repository and branch deploy: %s; a write stays in its environment: nothing was pushed",
		env.Name, strings.Join(what, "; "))}
}

// confine wraps req's Plan and Check so that the write is refused, before
// any push, when it changes the render of another environment that reads
// the same repository and branch (the refusal is kept in *hookErr).
func (s *Service) confine(ctx context.Context, env *envconfig.Environment, req *writeback.Request, hookErr *error) {
	others := s.neighbours(env)
	if len(others) == 0 {
		return
	}
	plan, check := req.Plan, req.Check
	var before renders
	req.Plan = func(tree fs.FS) ([]writeback.Edit, error) {
		var edits []writeback.Edit
		if plan != nil {
			var err error
			if edits, err = plan(tree); err != nil {
				return nil, err
			}
		}
		rctx, cancel := context.WithTimeout(ctx, writeback.EnvLimits(env).Timeout)
		defer cancel()
		before = renderAll(rctx, others, tree)
		return edits, nil
	}
	req.Check = func(ctx context.Context, tree fs.FS) error {
		if check != nil {
			if err := check(ctx, tree); err != nil {
				return err
			}
		}
		if err := reachError(env, before, renderAll(ctx, others, tree)); err != nil {
			*hookErr = err
			return err
		}
		return nil
	}
}
