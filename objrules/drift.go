package objrules

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/managedfields"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// DriftField is one field of a live object that a manager other than the
// App's operator set, and that the operator does not own: a change made by
// hand (kubectl edit, set, scale, annotate, label) or by another tool. It
// comes from the object's metadata.managedFields, which the API server keeps
// for every write.
type DriftField struct {
	// Path is the field, e.g. spec.template.spec.containers[name=web].env[name=EXTRA_FLAG]
	// or metadata.annotations["team.example.com/owner"].
	Path string `json:"path"`
	// Manager is the field manager that set it (kubectl-set, kubectl-edit, ...).
	Manager string `json:"manager"`
	// Operation is Apply (server-side apply) or Update.
	Operation string `json:"operation"`
	// Time is when that manager last wrote the object, when the server says.
	Time *time.Time `json:"time,omitempty"`
	// Live is the field's live value as compact JSON, at most
	// maxDriftValue bytes ("…" marks a cut).
	Live string `json:"live"`
	// at is Path as structured-merge-diff reads it, for DriftValues.
	at fieldpath.Path
}

// DriftRules say whose writes are expected on an object.
type DriftRules struct {
	// OperatorManagers are the field managers of the App's operator; their
	// fields are the desired state, never drift.
	OperatorManagers []string
}

// DefaultOperatorManager is the default of Options.OperatorManagers: the
// reference operator's field manager.
const DefaultOperatorManager = appcr.OperatorManager

// Bounds of a drift summary: a hostile object can carry thousands of fields.
const (
	maxDriftFields = 50
	maxDriftValue  = 256
)

// ControllerManager is the field manager of kube-controller-manager's
// controllers (deployment, HPA, garbage collector, ...).
const controllerManager = "kube-controller-manager"

// systemOwned reports whether a field written by manager (through
// subresource) is one that Kubernetes itself maintains, so it is never
// drift. The list is deliberately small; each entry is tested in
// drift_test.go:
//   - anything under status, or written through the status subresource;
//   - the deployment controller's revision annotations;
//   - pod-template-hash labels (ReplicaSets and Pods carry them);
//   - finalizers and ownerReferences written by kube-controller-manager;
//   - spec.replicas written through the scale subresource by
//     kube-controller-manager: the HorizontalPodAutoscaler (a person's
//     `kubectl scale` is a different manager and is drift);
//   - the pod template's appcr.RestartedAtAnnotation, by anyone: a
//     restart request (kubectl rollout restart, deploy-web's restart), not
//     a change of the desired state, so self-heal leaves it too.
//
// Fields the API server defaults are in no manager's set, so they never
// appear in the first place.
func systemOwned(p []string, manager, subresource string) bool {
	if subresource == "status" || (len(p) > 0 && p[0] == "status") {
		return true
	}
	if len(p) == 3 && p[0] == "metadata" && p[1] == "annotations" && strings.HasPrefix(p[2], "deployment.kubernetes.io/") {
		return true
	}
	if len(p) == 3 && p[0] == "metadata" && p[1] == "labels" && p[2] == "pod-template-hash" {
		return true
	}
	if len(p) == 5 && p[0] == "spec" && p[1] == "template" && p[2] == "metadata" && p[3] == "annotations" && p[4] == appcr.RestartedAtAnnotation {
		return true
	}
	if manager == controllerManager && len(p) >= 2 && p[0] == "metadata" && (p[1] == "finalizers" || p[1] == "ownerReferences") {
		return true
	}
	if manager == controllerManager && subresource == "scale" && len(p) == 2 && p[0] == "spec" && p[1] == "replicas" {
		return true
	}
	return false
}

// derivedKind reports kinds whose objects are written by controllers from a
// template (ReplicaSets, Pods): they have no drift of their own; a hand
// change shows on the Deployment or StatefulSet that owns them.
func DerivedKind(kind string) bool {
	return kind == "Pod" || kind == "ReplicaSet"
}

// Drift returns the fields of an object that a manager other than the
// operator set and the operator does not own, sorted by path, at most
// maxDriftFields. content is the object as a map (for the live values); it
// is read only when there is drift. Malformed managedFields entries are
// skipped: drift is a report, never a reason to fail a page.
func Drift(kind string, entries []metav1.ManagedFieldsEntry, content func() map[string]any, rules DriftRules) []DriftField {
	if DerivedKind(kind) || len(entries) == 0 {
		return nil
	}
	foreign := false
	for _, e := range entries {
		if !slices.Contains(rules.OperatorManagers, e.Manager) && e.Subresource != "status" {
			foreign = true
			break
		}
	}
	if !foreign {
		return nil
	}
	operator := &fieldpath.Set{}
	for _, e := range entries {
		if slices.Contains(rules.OperatorManagers, e.Manager) {
			if s := parseFields(e.FieldsV1); s != nil {
				operator = operator.Union(s)
			}
		}
	}
	var out []DriftField
	var obj map[string]any
	seen := map[string]bool{}
	for _, e := range entries {
		if slices.Contains(rules.OperatorManagers, e.Manager) || e.Subresource == "status" {
			continue
		}
		s := parseFields(e.FieldsV1)
		if s == nil {
			continue
		}
		own := s.Difference(operator)
		for p := range own.All() {
			p = reported(p, own)
			if p == nil {
				continue
			}
			names := fieldNames(p)
			if systemOwned(names, e.Manager, e.Subresource) {
				continue
			}
			path := formatPath(p)
			if seen[path] {
				continue
			}
			if obj == nil && content != nil {
				obj = content()
			}
			v, present := lookupPath(obj, p)
			if obj != nil && !present {
				// A field the object no longer has: the API server dropped
				// it (spec.allocateLoadBalancerNodePorts once a Service is
				// no longer a LoadBalancer) and left its manager's entry.
				continue
			}
			seen[path] = true
			d := DriftField{Path: path, Manager: e.Manager, Operation: string(e.Operation), Live: compactValue(v, present), at: p.Copy()}
			if e.Time != nil {
				t := e.Time.Time
				d.Time = &t
			}
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b DriftField) int { return strings.Compare(a.Path, b.Path) })
	if len(out) > maxDriftFields {
		out = out[:maxDriftFields]
	}
	return out
}

// UnrecordedScaleManager is the manager of a drift found by
// UnrecordedScale: the API server recorded none.
const UnrecordedScaleManager = "(not recorded: scale subresource, e.g. kubectl scale)"

// replicasPath is spec.replicas.
var replicasPath = fieldpath.MakePathOrDie("spec", "replicas")

// UnrecordedScale finds the drift Drift cannot: a Deployment or
// StatefulSet scaled through the scale subresource (kubectl scale) while
// no manager owned spec.replicas (its manifest leaves the count out). The
// API server does not track such a write (the scale object it updates
// has no managed fields), so only the count shows it: with no owner,
// spec.replicas is the API server's default, 1, unless someone scaled it.
// autoscaled says a HorizontalPodAutoscaler targets the object: then the
// count is the autoscaler's (it writes through the same subresource), not
// drift.
func UnrecordedScale(kind string, entries []metav1.ManagedFieldsEntry, obj map[string]any, autoscaled bool) (DriftField, bool) {
	if autoscaled || (kind != "Deployment" && kind != "StatefulSet") {
		return DriftField{}, false
	}
	v, present := lookupPath(obj, replicasPath)
	if !present {
		return DriftField{}, false
	}
	if n, ok := v.(int64); ok && n == 1 {
		return DriftField{}, false
	}
	if f, ok := v.(float64); ok && f == 1 {
		return DriftField{}, false
	}
	for _, e := range entries {
		if s := parseFields(e.FieldsV1); s != nil && s.Has(replicasPath) {
			return DriftField{}, false
		}
	}
	return DriftField{Path: "spec.replicas", Manager: UnrecordedScaleManager, Operation: string(metav1.ManagedFieldsOperationUpdate),
		Live: compactValue(v, true), at: replicasPath.Copy()}, true
}

func parseFields(f *metav1.FieldsV1) *fieldpath.Set {
	s, err := managedfields.Parse(f)
	if err != nil {
		return nil
	}
	return s
}

// reported maps a member path of set to the path reported for it, or nil:
// a list element the manager created is reported once, as the element
// (not each of its fields); otherwise only leaves are reported (a map or
// struct a manager "owns" because it created it says nothing by itself).
func reported(p fieldpath.Path, set *fieldpath.Set) fieldpath.Path {
	for i, pe := range p {
		if pe.FieldName == nil && set.Has(p[:i+1]) {
			return p[:i+1]
		}
	}
	if hasChildren(set, p) {
		return nil
	}
	return p
}

// hasChildren reports whether set holds a path below p.
func hasChildren(set *fieldpath.Set, p fieldpath.Path) bool {
	cur := set
	for _, pe := range p {
		next, ok := cur.Children.Get(pe)
		if !ok {
			return false
		}
		cur = next
	}
	return !cur.Empty()
}

// fieldNames returns the path's field names, with "[]" for list elements,
// for the system rules.
func fieldNames(p fieldpath.Path) []string {
	out := make([]string, len(p))
	for i, pe := range p {
		if pe.FieldName != nil {
			out[i] = *pe.FieldName
		} else {
			out[i] = "[]"
		}
	}
	return out
}

var plainField = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// FormatPath is formatPath, for the plan's changes (deployplan), so a path
// reads the same in a drift and in a change.
func FormatPath(p fieldpath.Path) string { return formatPath(p) }

// formatPath writes a path the way people read it:
// spec.template.spec.containers[name=web].env[name=EXTRA_FLAG],
// metadata.annotations["example.com/owner"], metadata.finalizers["x"], args[2].
func formatPath(p fieldpath.Path) string {
	var b strings.Builder
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			name := *pe.FieldName
			if plainField.MatchString(name) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(name)
			} else {
				b.WriteString("[" + strconv.Quote(name) + "]")
			}
		case pe.Key != nil:
			b.WriteByte('[')
			for i, f := range *pe.Key {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(f.Name + "=" + scalarString(f.Value))
			}
			b.WriteByte(']')
		case pe.Value != nil:
			b.WriteString("[" + strconv.Quote(scalarString(*pe.Value)) + "]")
		case pe.Index != nil:
			b.WriteString("[" + strconv.Itoa(*pe.Index) + "]")
		}
	}
	return b.String()
}

func scalarString(v value.Value) string {
	if v == nil {
		return "null"
	}
	if v.IsString() {
		return v.AsString()
	}
	return value.ToString(v)
}

// lookupPath finds the path's value in obj; present is false when obj
// has no such field or element.
func lookupPath(obj map[string]any, p fieldpath.Path) (v any, present bool) {
	var cur any = obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			cur, ok = m[*pe.FieldName]
			if !ok {
				return nil, false
			}
		case pe.Index != nil:
			l, ok := cur.([]any)
			if !ok || *pe.Index < 0 || *pe.Index >= len(l) {
				return nil, false
			}
			cur = l[*pe.Index]
		default:
			l, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			var found any
			for _, el := range l {
				if managedfields.Matches(el, pe) {
					found = el
					break
				}
			}
			if found == nil {
				return nil, false
			}
			cur = found
		}
	}
	return cur, true
}

// compactValue is v as compact JSON, at most maxDriftValue bytes; "" when
// absent.
func compactValue(v any, present bool) string {
	if !present {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return textfmt.Cut(string(b), maxDriftValue)
}
