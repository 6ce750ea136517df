package deployplan

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hanzoai/deploy-web/envconfig"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MaxRefBytes bounds a ref a user asks to compare to.
const MaxRefBytes = 200

// pullRefRE is a pull request's head, "pull/N": N digits only, no leading
// zero.
var pullRefRE = regexp.MustCompile(`^pull/[1-9][0-9]{0,9}$`)

// pullHead is the server ref of a pull request ref ("pull/12" ->
// refs/pull/12/head), ok false for any other ref.
func pullHead(ref string) (string, bool) {
	if !pullRefRE.MatchString(ref) {
		return "", false
	}
	return "refs/" + ref + "/head", true
}

// ValidateRef checks a ref a user (a "Compare to" box, deploy-web diff
// --ref) asks to render: a branch, a tag, a full commit hash or pull/N. It
// follows git's ref name rules (git check-ref-format) and is stricter: only
// letters, digits and . _ - / are allowed, so no revision syntax (~ ^ : @{),
// no glob, no space or control character reaches git; no component starts
// with "." or "-", none ends with ".lock", and ".." and "//" are refused. A
// ref that starts with "pull/" must be pull/N with N digits only.
func ValidateRef(ref string) error {
	bad := func(why string) error {
		return &RefError{public: fmt.Sprintf("ref %q: %s; give a branch, a tag, a full commit hash or pull/N", truncateRef(ref), why)}
	}
	switch {
	case ref == "":
		return bad("empty")
	case len(ref) > MaxRefBytes:
		return bad(fmt.Sprintf("longer than %d bytes", MaxRefBytes))
	case strings.HasPrefix(ref, "-"):
		return bad("starts with '-'")
	case strings.Contains(ref, ".."):
		return bad("holds '..'")
	case strings.Contains(ref, "//") || strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/"):
		return bad("has an empty path component")
	case strings.HasSuffix(ref, "."):
		return bad("ends with '.'")
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/') {
			return bad(fmt.Sprintf("holds %q (only letters, digits and . _ - / are allowed)", string(rune(c))))
		}
	}
	for _, comp := range strings.Split(ref, "/") {
		if strings.HasPrefix(comp, ".") || strings.HasPrefix(comp, "-") {
			return bad(fmt.Sprintf("component %q starts with %q", comp, comp[:1]))
		}
		if strings.HasSuffix(comp, ".lock") {
			return bad(fmt.Sprintf("component %q ends with .lock", comp))
		}
	}
	if strings.HasPrefix(ref, "pull/") {
		if _, ok := pullHead(ref); !ok {
			return bad("a pull request is pull/N, N digits only")
		}
	}
	if ref == "HEAD" || strings.HasPrefix(ref, "refs/") {
		return bad("name a branch, a tag, a commit or pull/N, not a full ref")
	}
	return nil
}

func truncateRef(ref string) string {
	if len(ref) > 64 {
		return ref[:64] + "..."
	}
	return ref
}

// AtRef returns a copy of env whose source is ref instead of its
// configured ref, for rendering a branch, a tag, a commit or a pull
// request's head without changing the environment (env is not modified,
// and the copy shares nothing the render writes). ref must pass
// ValidateRef, and env must read its source from git.
func AtRef(env *envconfig.Environment, ref string) (*envconfig.Environment, error) {
	if err := ValidateRef(ref); err != nil {
		return nil, err
	}
	if env.Source.Repo == "" {
		return nil, &RefError{public: fmt.Sprintf("environment %s: its source is a local folder, which has no refs: set source.repo to compare to a ref", env.Name)}
	}
	c := *env
	c.Source.Ref = ref
	return &c, nil
}

// LiveReader reads the live state of an environment's objects from its
// cluster, for a comparison (revdiff): it writes nothing.
type LiveReader struct {
	env *envconfig.Environment
	cl  *clients
}

// OpenLive reaches env's cluster (opts' rest config or kubeconfig, else
// the environment's own). A cluster that cannot be reached is an error.
func OpenLive(env *envconfig.Environment, opts Options) (*LiveReader, error) {
	cl, _, unreachable := connectCluster(env, opts)
	if unreachable != nil {
		return nil, fmt.Errorf("deployplan: environment %s: %s", env.Name, unreachable.Message)
	}
	return &LiveReader{env: env, cl: cl}, nil
}

// Scope is the cluster's answer to whether a kind is namespaced
// (discovery): the Scope of the namespace rule when the cluster is at
// hand.
func (lr *LiveReader) Scope(gvk schema.GroupVersionKind) (namespaced, known bool) {
	return lr.cl.scope(gvk)
}

// LiveRead is what a LiveReader read.
type LiveRead struct {
	// Objects are the live objects that exist, in the order asked; an
	// object deploy-web does not manage is reduced to its apiVersion,
	// kind, namespace and name (its key is in Unmanaged).
	Objects []*unstructured.Unstructured
	// Outside are the keys (LiveKey) of the objects outside
	// the environment's boundary, not read.
	Outside []string
	// Unmanaged are the keys of the live objects that exist but that
	// deploy-web does not manage: no field of theirs is deploy-web's
	// (FieldManager) and the managed set does not name them. None of
	// their values is kept.
	Unmanaged []string
}

// Read reads the live state of objs (what a render or a record names,
// under the namespace rule: WithNamespace with lr.Scope): each object that
// exists, as a plan reads it (a Secret through the metadata API only, so
// its values never reach this process, keeping the hash its last apply
// stamped while no other manager wrote it). Only objects inside the
// environment's boundary are read, as a plan reads them: in its
// namespace, of a known namespaced kind, not reserved; the others (which
// a plan blocks) are returned in Outside, unread, so a ref cannot make
// deploy-web show an object of another namespace. A live object counts as
// deploy-web's when managed (by LiveKey: the objects the
// environment's last applied record names) holds it or a managedFields
// entry is FieldManager's; any other comes back without its values
// (Unmanaged), so a ref that names someone else's ConfigMap cannot print
// it. An object that cannot be read is an error.
func (lr *LiveReader) Read(ctx context.Context, objs []*unstructured.Unstructured, managed map[string]bool) (LiveRead, error) {
	var out LiveRead
	env := lr.env
	for _, o := range WithNamespace(objs, env.Namespace, lr.Scope) {
		if o.GetNamespace() != env.Namespace || ReservedName(o) != "" {
			out.Outside = append(out.Outside, key(o))
			continue
		}
		if namespaced, known := lr.cl.scope(o.GroupVersionKind()); !known || !namespaced {
			out.Outside = append(out.Outside, key(o))
			continue
		}
		l, err := lr.cl.get(ctx, o)
		if err != nil {
			return LiveRead{}, fmt.Errorf("deployplan: environment %s: read %s: %s", env.Name, key(o), shortErr(err))
		}
		if l == nil {
			continue
		}
		if !managed[key(l)] && !ManagedByDeployWeb(l) {
			out.Unmanaged = append(out.Unmanaged, key(l))
			l = stub(l)
		}
		out.Objects = append(out.Objects, l)
	}
	return out, nil
}

// ManagedByDeployWeb reports whether a live object has fields deploy-web
// applied: a managedFields entry of FieldManager. A Secret read as
// metadata keeps no managedFields; it counts when metadataOnly found
// deploy-web's write (SecretAppliedAtAnnotation): its values are never
// read anyway.
func ManagedByDeployWeb(live *unstructured.Unstructured) bool {
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == FieldManager {
			return true
		}
	}
	if isSecret(live) {
		return live.GetAnnotations()[SecretAppliedAtAnnotation] != ""
	}
	return false
}

// stub is u's apiVersion, kind, namespace and name, nothing else.
func stub(u *unstructured.Unstructured) *unstructured.Unstructured {
	s := &unstructured.Unstructured{Object: map[string]any{}}
	s.SetAPIVersion(u.GetAPIVersion())
	s.SetKind(u.GetKind())
	s.SetNamespace(u.GetNamespace())
	s.SetName(u.GetName())
	return s
}

// LiveKey is the key Read and LiveRead use for an object:
// group/Kind/namespace/name.
func LiveKey(o *unstructured.Unstructured) string { return key(o) }

// RefError is a ref ValidateRef refuses; Public says why, in words a user
// may read.
type RefError struct{ public string }

func (e *RefError) Error() string { return "deployplan: " + e.public }

// Public is the refusal in words a user may read.
func (e *RefError) Public() string { return e.public }
