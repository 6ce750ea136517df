// Package revdiff compares two sets of manifests resource by resource: two
// records of the history (the manifests each apply wrote), a record and
// the live objects, or a git ref rendered by the plan engine and live.
//
// Each resource, keyed by group, kind, namespace and name (the version is
// not part of the key), is added, changed, removed or unchanged, and a
// changed one carries a line diff in diffrender's model. The direction is
// diffrender's: the "from" set is the left side, before, the "to" set the
// right side, after; a line only in "to" is an insert ("+").
//
// The normalisation is the resource diff's: both sides go through
// diffrender.Normalize, and a live side is restricted to the fields the
// other side sets (diffrender.RestrictToDesired), so fields the API server
// or a controller defaulted do not show as changes while a hand edit of a
// field the manifests set does.
//
// Secrets are compared by the hash annotation alone
// (deployplan.SecretHashAnnotation, which the audit store keeps and each
// apply stamps on the live Secret): "changed (hash)" when the hashes
// differ or one is unknown, unchanged otherwise. Nothing else of a Secret
// is read, so neither its values nor its hash ever reach a diff. Callers
// reduce stored and rendered Secrets with audit.StripSecrets and live ones
// with StripLive.
//
// Compare and the reports are pure (no I/O, arguments never mutated);
// CompareEnvironment renders a ref and reads the live objects, writing
// nothing.
package revdiff

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/diffrender"
	"github.com/hanzoai/deploy-web/internal/limit"
)

// Status is what happened to one resource between "from" and "to".
type Status string

// The statuses.
const (
	Added     Status = "added"
	Changed   Status = "changed"
	Removed   Status = "removed"
	Unchanged Status = "unchanged"
)

// Default bounds of a comparison (Options): resources diffed line by line,
// diff rows kept per resource and in all.
const (
	DefaultMaxResources  = 2000
	DefaultMaxLines      = 2000
	DefaultMaxTotalLines = 50000
	// Context is the number of unchanged lines kept around each change.
	Context = 3
)

// Options bound and orient a comparison.
type Options struct {
	// FromLive and ToLive say which side holds live objects: a live side
	// is restricted to the fields the other side sets.
	FromLive, ToLive bool
	// MaxResources caps the resources compared (default
	// DefaultMaxResources); the ones past the cap, in key order, are
	// counted in Result.Omitted and not compared.
	MaxResources int
	// MaxLines caps the diff rows kept per resource, MaxTotalLines those
	// kept in all (defaults DefaultMaxLines, DefaultMaxTotalLines); a
	// resource whose hunks were cut says so (Resource.LinesCut).
	MaxLines, MaxTotalLines int
	// Unmanaged are the resources of a live side that exist but that
	// deploy-web does not manage (deployplan.LiveRead.Unmanaged): read
	// without values, each compares as changed, "exists, not managed
	// here", with no line diff.
	Unmanaged map[Key]bool
}

func (o Options) maxResources() int { return limit.Or(o.MaxResources, DefaultMaxResources) }

func (o Options) maxLines() int { return limit.Or(o.MaxLines, DefaultMaxLines) }

func (o Options) maxTotalLines() int { return limit.Or(o.MaxTotalLines, DefaultMaxTotalLines) }

// Key names a resource.
type Key struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String is group/kind/namespace/name, without empty parts' slashes for
// the core group and cluster-scoped resources ("Deployment web/api").
func (k Key) String() string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace == "" {
		return kind + " " + k.Name
	}
	return kind + " " + k.Namespace + "/" + k.Name
}

func (k Key) less(o Key) bool {
	if k.Group != o.Group {
		return k.Group < o.Group
	}
	if k.Kind != o.Kind {
		return k.Kind < o.Kind
	}
	if k.Namespace != o.Namespace {
		return k.Namespace < o.Namespace
	}
	return k.Name < o.Name
}

// KeyOf keys u.
func KeyOf(u *unstructured.Unstructured) Key {
	gvk := u.GroupVersionKind()
	return Key{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Resource is one resource's comparison.
type Resource struct {
	Key
	Status Status `json:"status"`
	// Secret marks a Secret, compared by hash: a changed Secret shows no
	// lines, only "changed (hash)".
	Secret bool `json:"secret,omitempty"`
	// Added and Removed count the diff's inserted and deleted lines.
	Added   int `json:"linesAdded"`
	Removed int `json:"linesRemoved"`
	// Hunks are the diff's changes with Context lines around each, cut to
	// the line bounds (LinesCut). Empty for a Secret and an unchanged
	// resource.
	Hunks []diffrender.Hunk `json:"-"`
	// LinesCut reports that hunks were cut to the line bounds.
	LinesCut bool `json:"linesCut,omitempty"`
	// Unmanaged marks a live resource that exists but that deploy-web
	// does not manage: none of its values was read or is shown.
	Unmanaged bool `json:"unmanaged,omitempty"`
	// Error says why the resource could not be diffed line by line (a
	// manifest YAML cannot hold); its status still stands.
	Error string `json:"error,omitempty"`
}

// NotManagedHere is the Summary of an Unmanaged resource.
const NotManagedHere = "exists, not managed here"

// Summary is what the status of a resource reads as: "changed (hash)"
// for a changed Secret, NotManagedHere for an unmanaged live one, else the
// status.
func (r Resource) Summary() string {
	if r.Unmanaged {
		return NotManagedHere
	}
	if r.Secret && r.Status == Changed {
		return "changed (hash)"
	}
	return string(r.Status)
}

// Unified is the resource's diff as unified text, as diffrender writes
// it: hunk headers and lines prefixed with " ", "-" or "+".
func (r Resource) Unified() string {
	return diffrender.UnifiedHunks(r.Hunks)
}

// Counts are the resources per status.
type Counts struct {
	Added     int `json:"added"`
	Changed   int `json:"changed"`
	Removed   int `json:"removed"`
	Unchanged int `json:"unchanged"`
}

// Result is a comparison of two sets of manifests.
type Result struct {
	Counts Counts `json:"counts"`
	// Resources are the added, changed and removed resources in key
	// order (unchanged ones are only counted).
	Resources []Resource `json:"resources"`
	// Omitted counts the resources past Options.MaxResources, not
	// compared and not counted in Counts.
	Omitted int `json:"omitted,omitempty"`
	// LinesCut reports that some resource's hunks were cut.
	LinesCut bool `json:"linesCut,omitempty"`
}

// Changes reports whether anything was added, changed or removed (or not
// compared: an omitted resource may have changed).
func (r *Result) Changes() bool {
	return r.Counts.Added+r.Counts.Changed+r.Counts.Removed+r.Omitted > 0
}

// Compare compares from (before, left) with to (after, right). A resource
// listed twice on one side is an error, as is a nil object.
func Compare(from, to []*unstructured.Unstructured, opts Options) (*Result, error) {
	fm, err := index(from, "from")
	if err != nil {
		return nil, err
	}
	tm, err := index(to, "to")
	if err != nil {
		return nil, err
	}
	keys := make([]Key, 0, len(fm)+len(tm))
	for k := range fm {
		keys = append(keys, k)
	}
	for k := range tm {
		if _, ok := fm[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	res := &Result{Resources: []Resource{}}
	if n := opts.maxResources(); len(keys) > n {
		res.Omitted = len(keys) - n
		keys = keys[:n]
	}
	budget := opts.maxTotalLines()
	for _, k := range keys {
		r := compareOne(k, fm[k], tm[k], opts)
		switch r.Status {
		case Added:
			res.Counts.Added++
		case Removed:
			res.Counts.Removed++
		case Changed:
			res.Counts.Changed++
		default:
			res.Counts.Unchanged++
			continue
		}
		r.Hunks = cut(&r, min(opts.maxLines(), budget))
		budget = max(budget-rowCount(r.Hunks), 0)
		res.LinesCut = res.LinesCut || r.LinesCut
		res.Resources = append(res.Resources, r)
	}
	return res, nil
}

func rowCount(hs []diffrender.Hunk) int {
	n := 0
	for _, h := range hs {
		n += len(h.Rows)
	}
	return n
}

// cut keeps at most limit rows of r's hunks, marking r when it cuts.
func cut(r *Resource, limit int) []diffrender.Hunk {
	var out []diffrender.Hunk
	left := limit
	for _, h := range r.Hunks {
		if left <= 0 {
			r.LinesCut = true
			break
		}
		if len(h.Rows) > left {
			h.Rows = h.Rows[:left:left]
			r.LinesCut = true
		}
		left -= len(h.Rows)
		out = append(out, h)
	}
	return out
}

func index(objs []*unstructured.Unstructured, side string) (map[Key]*unstructured.Unstructured, error) {
	m := make(map[Key]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		if o == nil {
			return nil, fmt.Errorf("revdiff: %s: manifest %d is nil", side, i)
		}
		k := KeyOf(o)
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("revdiff: %s: %s is listed twice: a set of manifests holds each resource once", side, k)
		}
		m[k] = o
	}
	return m, nil
}

// IsSecret reports whether u is a Secret, by audit.StripSecrets' rule: any
// kind spelled "secret", in any group.
func IsSecret(u *unstructured.Unstructured) bool {
	return u != nil && strings.EqualFold(u.GetKind(), "Secret")
}

// compareOne compares one resource; a nil side is absent.
func compareOne(k Key, from, to *unstructured.Unstructured, opts Options) Resource {
	r := Resource{Key: k}
	switch {
	case from == nil:
		r.Status = Added
	case to == nil:
		r.Status = Removed
	}
	if opts.Unmanaged[k] && (opts.FromLive && from != nil || opts.ToLive && to != nil) {
		// Read without values: nothing to diff, nothing shown.
		r.Unmanaged = true
		if r.Status == "" {
			r.Status = Changed
		}
		return r
	}
	if IsSecret(from) || IsSecret(to) {
		r.Secret = true
		if r.Status == "" {
			r.Status = Unchanged
			if fh, th := secretHash(from), secretHash(to); fh == "" || fh != th {
				r.Status = Changed
			}
		}
		return r
	}
	var left, right map[string]any
	if from != nil {
		left = diffrender.Normalize(from.Object)
	}
	if to != nil {
		right = diffrender.Normalize(to.Object)
	}
	if opts.FromLive && right != nil {
		left = diffrender.RestrictToDesired(right, left)
	}
	if opts.ToLive && left != nil {
		right = diffrender.RestrictToDesired(left, right)
	}
	if r.Status == "" && reflect.DeepEqual(left, right) {
		r.Status = Unchanged // same values: same YAML, no need to render it
		return r
	}
	lt, err := diffrender.YAML(left)
	if err == nil {
		var rt string
		if rt, err = diffrender.YAML(right); err == nil {
			d := diffrender.Compute(lt, rt)
			r.Added, r.Removed, r.Hunks = d.Added, d.Removed, d.Hunks(Context)
			if r.Status == "" {
				r.Status = Unchanged
				if !d.Equal {
					r.Status = Changed
				}
			}
			return r
		}
	}
	r.Error = err.Error()
	if r.Status == "" {
		r.Status = Changed // cannot tell: shown, never hidden
	}
	return r
}

// secretHash is the hash annotation of a Secret, "" when it has none.
func secretHash(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	return u.GetAnnotations()[deployplan.SecretHashAnnotation]
}

// StripLive reduces the live objects of a comparison: a Secret (as
// IsSecret) to apiVersion, kind, namespace, name and the hash annotation
// the last apply stamped on it, when it still holds one (a Secret read
// through the metadata API, as deployplan reads it, keeps it only while no
// other manager wrote a value since; without it the Secret compares as
// changed). Unlike audit.StripSecrets it never hashes the data: a live
// Secret read as metadata has none. Other objects are returned as they
// are; objs is not modified.
func StripLive(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		if !IsSecret(o) {
			out[i] = o
			continue
		}
		s := &unstructured.Unstructured{Object: map[string]any{"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(), "metadata": map[string]any{}}}
		s.SetName(o.GetName())
		s.SetNamespace(o.GetNamespace())
		if h := secretHash(o); h != "" {
			s.SetAnnotations(map[string]string{deployplan.SecretHashAnnotation: h})
		}
		out[i] = s
	}
	return out
}
