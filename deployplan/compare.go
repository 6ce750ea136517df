package deployplan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/objrules"
)

// ObjectAction is the one comparison of a live object with what a
// server-side apply makes of it: the dry-run's result in a plan, the
// apply's response after it (Apply records "unchanged" exactly when this
// says ActionUnchanged). Create when there is no live object, unchanged
// when nothing would be written, else update.
//
// "Nothing would be written" includes the field ownership: an apply that
// only takes back shared ownership of fields another manager set to the
// same values (after kubectl rollout undo, kubectl apply of the same
// manifest) writes the object (a new resourceVersion), so it is an update,
// and the plan's changes say so (ownership). Only the managed fields'
// timestamps are left out: the API server itself keeps them when nothing
// else changes.
func ObjectAction(live, after *unstructured.Unstructured) string {
	if live == nil {
		return ActionCreate
	}
	if after == nil {
		return ActionUnknown
	}
	if reflect.DeepEqual(comparable(live), comparable(after)) {
		return ActionUnchanged
	}
	return ActionUpdate
}

// ownershipKey is the key comparable keeps the managed fields under; it is
// not a valid field name, so no object has it.
const ownershipKey = "(ownership)"

// comparable is u without what every write changes (resourceVersion,
// generation, status, the managed fields' timestamps) and with its managed
// fields as a map from manager to field set.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy().Object
	unstructured.RemoveNestedField(c, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid"} {
		unstructured.RemoveNestedField(c, "metadata", f)
	}
	if own := ownership(u.GetManagedFields()); len(own) > 0 {
		c[ownershipKey] = own
	}
	return c
}

// ownership maps each managed-fields entry (manager, operation,
// subresource, apiVersion) to its field set, times left out.
func ownership(mfs []metav1.ManagedFieldsEntry) map[string]string {
	if len(mfs) == 0 {
		return nil
	}
	out := make(map[string]string, len(mfs))
	for _, e := range mfs {
		set := ""
		if e.FieldsV1 != nil {
			set = e.FieldsV1.GetRawString()
		}
		out[ownerName(e)] = set
	}
	return out
}

// ownerName names a managed-fields entry as a user reads it: the manager,
// with its operation, and its subresource when it wrote through one
// ("kubectl-patch (Update)", "kube-controller-manager (Update, scale)").
func ownerName(e metav1.ManagedFieldsEntry) string {
	s := safeText(e.Manager) + " (" + string(e.Operation)
	if e.Subresource != "" {
		s += ", " + safeText(e.Subresource)
	}
	if e.APIVersion != "" {
		s += ", " + safeText(e.APIVersion)
	}
	return s + ")"
}

// Bounds of an object's changes in a report: a plan of a large object (a
// CRD-sized ConfigMap, a Deployment with hundreds of env vars) stays small.
const (
	// MaxChanges is the most changed paths kept per object; the rest are
	// counted in ObjectPlan.ChangesOmitted.
	MaxChanges = 20
	// MaxChangeValue is the most bytes of an old or new value ("…" marks
	// a cut).
	MaxChangeValue = 120
)

// Change is one changed field of an object, as a plan sees it: the live
// value before, the value after the apply (each "" when absent, compact
// JSON for a map or list, at most MaxChangeValue bytes). Path reads as a
// drift's does: spec.template.spec.containers[name=web].image,
// metadata.annotations["example.com/x"]. A change of field ownership has
// the path "managedFields[<manager> (<operation>, ...)]" and lists the
// fields that manager gives up (old) and takes (new). A Secret's values
// are one change "data", compared by hash: never a value, never a key.
type Change struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// Changes lists what differs between a live object and what an apply makes
// of it (the same two objects ObjectAction compares), sorted by path, at
// most MaxChanges; omitted counts the rest. A Secret's live and dry-run
// objects are metadata copies (metadataOnly): its values show as one
// change naming what is known of them.
func Changes(live, after *unstructured.Unstructured) (changes []Change, omitted int) {
	if live == nil || after == nil {
		return nil, 0
	}
	a, b := comparable(live), comparable(after)
	ownA, ownB := a[ownershipKey], b[ownershipKey]
	delete(a, ownershipKey)
	delete(b, ownershipKey)
	var out []Change
	if isSecret(live) {
		out = secretValueChange(live, after)
		for _, m := range []map[string]any{a, b} {
			unstructured.RemoveNestedField(m, "metadata", "annotations", SecretHashAnnotation)
			unstructured.RemoveNestedField(m, "metadata", "annotations", SecretWrittenByAnnotation)
			unstructured.RemoveNestedField(m, "metadata", "annotations", SecretAppliedAtAnnotation)
			if ann, ok, _ := unstructured.NestedMap(m, "metadata", "annotations"); ok && len(ann) == 0 {
				unstructured.RemoveNestedField(m, "metadata", "annotations")
			}
		}
	}
	diffValue("", a, true, b, true, &out)
	om, _ := ownA.(map[string]string)
	nm, _ := ownB.(map[string]string)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	// Ownership after the fields: what changes first, who owns it next.
	out = append(out, ownershipChanges(om, nm, out)...)
	if len(out) > MaxChanges {
		return out[:MaxChanges], len(out) - MaxChanges
	}
	return out, 0
}

// secretValueChange is the one change of a Secret's values, when the hash
// deploy-web reads on its metadata copies (or who wrote the values since)
// differs: the values themselves are never read.
func secretValueChange(live, after *unstructured.Unstructured) []Change {
	la, aa := live.GetAnnotations(), after.GetAnnotations()
	if la[SecretHashAnnotation] == aa[SecretHashAnnotation] && la[SecretWrittenByAnnotation] == aa[SecretWrittenByAnnotation] &&
		la[SecretAppliedAtAnnotation] == aa[SecretAppliedAtAnnotation] {
		return nil
	}
	old := "values of another render (their hash differs)"
	switch {
	case la[SecretWrittenByAnnotation] != "":
		old = "values written by " + la[SecretWrittenByAnnotation] + " after deploy-web's last apply"
	case la[SecretHashAnnotation] == "":
		old = "values not written by deploy-web"
	}
	return []Change{{Path: "data", Old: old, New: "the rendered values (compared by hash, never read)"}}
}

// diffValue appends the changes between a (present when aok) and b at path.
func diffValue(path string, a any, aok bool, b any, bok bool, out *[]Change) {
	if aok && bok && reflect.DeepEqual(a, b) {
		return
	}
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aok && bok && aIsMap && bIsMap {
		diffEntries(am, bm, func(k string) string { return joinField(path, k) }, out)
		return
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aok && bok && aIsList && bIsList {
		an, aNamed := byName(al)
		bn, bNamed := byName(bl)
		switch {
		case aNamed && bNamed:
			diffEntries(an, bn, func(n string) string { return path + "[name=" + safeText(n) + "]" }, out)
			return
		case len(al) == len(bl):
			for i := range al {
				diffValue(path+"["+strconv.Itoa(i)+"]", al[i], true, bl[i], true, out)
			}
			return
		}
	}
	*out = append(*out, Change{Path: path, Old: changeValue(a, aok), New: changeValue(b, bok)})
}

// diffEntries diffs two maps (of fields, or of list elements by name)
// entry by entry; at is the path of an entry.
func diffEntries(a, b map[string]any, at func(string) string, out *[]Change) {
	for _, k := range unionKeys(a, b) {
		av, aok := a[k]
		bv, bok := b[k]
		diffValue(at(k), av, aok, bv, bok, out)
	}
}

// unionKeys lists the keys of a and b once each.
func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// joinField appends a field name to a path as objrules.FormatPath writes
// it (a name that is not plain goes in brackets, quoted).
func joinField(path, name string) string {
	f := objrules.FormatPath(fieldpath.MakePathOrDie(name))
	if path == "" || strings.HasPrefix(f, "[") {
		return path + f
	}
	return path + "." + f
}

// byName indexes a list whose elements are all maps with a distinct string
// "name" (containers, env, ports, volumes), as the API server merges them.
func byName(l []any) (map[string]any, bool) {
	if len(l) == 0 {
		return nil, false
	}
	out := make(map[string]any, len(l))
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		n, ok := m["name"].(string)
		if !ok {
			return nil, false
		}
		if _, dup := out[n]; dup {
			return nil, false
		}
		out[n] = m
	}
	return out, true
}

// changeValue is a value as a change shows it: a string as it is, anything
// else as compact JSON, "" when absent; at most MaxChangeValue bytes.
func changeValue(v any, present bool) string {
	if !present {
		return ""
	}
	if s, ok := v.(string); ok {
		return textfmt.Cut(safeText(s), MaxChangeValue)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return textfmt.Cut(escapeFormat(string(b)), MaxChangeValue)
}

// safeText is s, or s quoted as a Go string when it holds a control or
// format character: a value from the cluster must not move the cursor or
// clear the terminal that prints a summary, nor break a Markdown table
// row, nor read otherwise than it is written (a bidi control such as
// U+202E, a zero-width character); the quote shows each as its escape.
func safeText(s string) string {
	if strings.IndexFunc(s, textfmt.Hidden) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// escapeFormat is the JSON text js with each format character written as
// its \u escape (json.Marshal escapes control characters and the line
// separators but writes U+202E and the like as they are): the same
// JSON, which reads as it is written.
func escapeFormat(js string) string {
	if strings.IndexFunc(js, textfmt.Hidden) < 0 {
		return js
	}
	var b strings.Builder
	for _, r := range js {
		if !unicode.Is(unicode.Cf, r) {
			b.WriteRune(r)
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		} else {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// ownershipChanges lists, per managed-fields entry whose field set differs,
// the fields it gives up (old) and takes (new). deploy-web's own entry
// does not list the fields it takes because their values change (values,
// the value changes): a new env var is one change, not two.
func ownershipChanges(before, after map[string]string, values []Change) []Change {
	var out []Change
	for _, n := range unionKeys(before, after) {
		if before[n] == after[n] {
			continue
		}
		b, a := fieldSet(before[n]), fieldSet(after[n])
		gives, takes := b.Difference(a), a.Difference(b)
		if strings.HasPrefix(n, FieldManager+" (") {
			takes = withoutChanged(takes, values)
			if gives.Empty() && takes.Empty() {
				continue
			}
		}
		out = append(out, Change{Path: "managedFields[" + n + "]", Old: fieldList(gives), New: fieldList(takes)})
	}
	return out
}

// withoutChanged is the leaves of s that are not at or under the path of
// a value change.
func withoutChanged(s *fieldpath.Set, values []Change) *fieldpath.Set {
	out := &fieldpath.Set{}
	for p := range s.Leaves().All() {
		fp := objrules.FormatPath(p)
		under := false
		for _, c := range values {
			if fp == c.Path || strings.HasPrefix(fp, c.Path+".") || strings.HasPrefix(fp, c.Path+"[") {
				under = true
				break
			}
		}
		if !under {
			out.Insert(p)
		}
	}
	return out
}

func fieldSet(raw string) *fieldpath.Set {
	s := &fieldpath.Set{}
	if raw != "" {
		if err := s.FromJSON(strings.NewReader(raw)); err != nil {
			return &fieldpath.Set{}
		}
	}
	return s
}

// fieldList names the leaves of s, sorted and comma-separated, bounded.
func fieldList(s *fieldpath.Set) string {
	var ps []string
	for p := range s.Leaves().All() {
		ps = append(ps, safeText(objrules.FormatPath(p)))
	}
	sort.Strings(ps)
	return textfmt.Cut(strings.Join(ps, ", "), MaxChangeValue)
}
