package deployplan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/objrules"
)

// DependsOnAnnotation, on an App's object (the App CR) in the rendered
// desired state, names the Apps it depends on: "App/a" or
// "App/a,App/b". An apply writes an App's objects only once the Apps it
// depends on are healthy (their App CR and workloads), and "why" names
// an App that waits on another.
const DependsOnAnnotation = "deploy-web.hanzo.ai/depends-on"

// Limits of DependsOnAnnotation: its value in bytes, and the Apps one App
// may name.
const (
	maxDependsOnBytes = 1024
	maxDependsOn      = 32
)

// appRefPrefix is how the annotation names an App: "App/name".
const appRefPrefix = "App/"

// isApp reports whether o is an App's object (the App CR kind): the only
// kind that carries DependsOnAnnotation, and what the apply waits for.
func isApp(o *unstructured.Unstructured) bool {
	return o.GroupVersionKind().GroupKind() == appcr.Kind.GroupKind()
}

// DependsOn is the Apps (names) the App object o depends on, in the
// annotation's order (none without DependsOnAnnotation), or why its
// annotation is refused: longer than 1 KiB, more than 32 Apps, an entry
// that is not "App/" and a DNS label (RFC 1123), an App named twice. The
// apply's order and "why" both read an App's dependencies here.
func DependsOn(o *unstructured.Unstructured) ([]string, error) {
	v, ok := o.GetAnnotations()[DependsOnAnnotation]
	if !ok {
		return nil, nil
	}
	if len(v) > maxDependsOnBytes {
		return nil, fmt.Errorf("annotation %s is %d bytes: more than %d", DependsOnAnnotation, len(v), maxDependsOnBytes)
	}
	parts := strings.Split(v, ",")
	if len(parts) > maxDependsOn {
		return nil, fmt.Errorf("annotation %s names %d Apps: more than %d", DependsOnAnnotation, len(parts), maxDependsOn)
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		name, ok := strings.CutPrefix(p, appRefPrefix)
		if !ok {
			return nil, fmt.Errorf("annotation %s: %q is not App/name", DependsOnAnnotation, textfmt.Cut(p, 70))
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, fmt.Errorf("annotation %s: %q is not an App's name (a DNS label: lower-case letters, digits and '-', at most 63)", DependsOnAnnotation, textfmt.Cut(p, 70))
		}
		if slices.Contains(out, name) {
			return nil, fmt.Errorf("annotation %s names App/%s twice", DependsOnAnnotation, name)
		}
		out = append(out, name)
	}
	return out, nil
}

// Settled reports whether a health lets what waits on it go on: Healthy,
// or Suspended (scaled to zero on purpose). The apply's waits (a wave's
// workloads, the Apps an App depends on) and "why" decide with it.
func Settled(h objrules.Health) bool {
	return h.Status == objrules.HealthHealthy || h.Status == objrules.HealthSuspended
}

// appDeps are the dependencies between the Apps of a render: each App's
// stage (0 for an App that depends on none, else one more than the
// highest stage of the Apps it depends on) and the objects of each App
// the apply waits for. An App's objects are its App CR and the objects
// labelled with its name (appcr.InstanceLabel), as AppObjects keeps
// them; an object of no App is in stage 0.
type appDeps struct {
	needs  map[string][]string // App -> the Apps it depends on
	stage  map[string]int
	waited map[string][]*unstructured.Unstructured // App -> its waited objects
}

// appDepsOf reads the dependencies of the Apps among objs. A refused
// annotation, an App missing or a cycle (DependsOnCheck's blockers) leave
// the Apps concerned in stage 0: the plan is blocked, the order is only
// shown.
func appDepsOf(objs []*unstructured.Unstructured) *appDeps {
	d := &appDeps{needs: map[string][]string{}, stage: map[string]int{}, waited: map[string][]*unstructured.Unstructured{}}
	for _, o := range objs {
		if !isApp(o) {
			continue
		}
		names, err := DependsOn(o)
		if err != nil {
			names = nil
		}
		d.needs[o.GetName()] = names
	}
	for _, o := range objs {
		if app := d.appOf(o); app != "" && waited(o) {
			d.waited[app] = append(d.waited[app], o)
		}
	}
	if len(d.cycles()) > 0 {
		return d
	}
	// Without a cycle the recursion ends: each call goes one App down
	// a chain no longer than the number of Apps.
	var depth func(app string) int
	depth = func(app string) int {
		if s, ok := d.stage[app]; ok {
			return s
		}
		s := 0
		for _, n := range d.needs[app] {
			if _, ok := d.needs[n]; ok {
				s = max(s, depth(n)+1)
			}
		}
		d.stage[app] = s
		return s
	}
	for app := range d.needs {
		depth(app)
	}
	return d
}

// appOf is the App o belongs to ("" when none): o is the App's object, or
// carries its name in appcr.InstanceLabel.
func (d *appDeps) appOf(o *unstructured.Unstructured) string {
	if d == nil {
		return ""
	}
	if isApp(o) {
		return o.GetName()
	}
	if n := o.GetLabels()[appcr.InstanceLabel]; n != "" {
		if _, ok := d.needs[n]; ok {
			return n
		}
	}
	return ""
}

// stageOf is the stage of o's App (0 for an object of no App).
func (d *appDeps) stageOf(o *unstructured.Unstructured) int {
	if d == nil {
		return 0
	}
	return d.stage[d.appOf(o)]
}

// waitsFor are the Apps the Apps of objs depend on, sorted, and the
// objects of theirs the apply waits for (in that order).
func (d *appDeps) waitsFor(objs []*unstructured.Unstructured) ([]string, []*unstructured.Unstructured) {
	if d == nil {
		return nil, nil
	}
	var apps []string
	for _, o := range objs {
		for _, n := range d.needs[d.appOf(o)] {
			if !slices.Contains(apps, n) {
				apps = append(apps, n)
			}
		}
	}
	sort.Strings(apps)
	var out []*unstructured.Unstructured
	for _, a := range apps {
		out = append(out, d.waited[a]...)
	}
	return apps, out
}

// appsIn are the Apps of objs, sorted.
func (d *appDeps) appsIn(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if a := d.appOf(o); a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// cycles are the dependency cycles between the Apps, each once, as
// "App/a -> App/b -> App/a" starting at its first App in name order;
// sorted.
func (d *appDeps) cycles() []string {
	names := make([]string, 0, len(d.needs))
	for n := range d.needs {
		names = append(names, n)
	}
	sort.Strings(names)
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	found := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		color[n] = grey
		stack = append(stack, n)
		for _, m := range d.needs[n] {
			if _, ok := d.needs[m]; !ok {
				continue // a missing App: DependsOnCheck names it
			}
			switch color[m] {
			case white:
				visit(m)
			case grey:
				i := slices.Index(stack, m)
				found[cycleString(stack[i:])] = true
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, n := range names {
		if color[n] == white {
			visit(n)
		}
	}
	out := make([]string, 0, len(found))
	for c := range found {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// cycleString is the cycle of the Apps in path (each depending on the
// next, the last on the first), rotated to start at its least name.
func cycleString(path []string) string {
	least := 0
	for i, n := range path {
		if n < path[least] {
			least = i
		}
	}
	refs := make([]string, 0, len(path)+1)
	for i := range path {
		refs = append(refs, appRefPrefix+path[(least+i)%len(path)])
	}
	refs = append(refs, refs[0])
	return strings.Join(refs, " -> ")
}

// DependsOnCheck returns the blockers of the Apps' dependencies among
// objs (a render, or a capture): an annotation refused (DependsOn) or on
// an object that is no App, an App depending on an App the objects do
// not hold (each named), and every cycle, named App by App.
func DependsOnCheck(objs []*unstructured.Unstructured) []Blocker {
	var out []Blocker
	d := appDepsOf(objs)
	for _, o := range objs {
		if _, ok := o.GetAnnotations()[DependsOnAnnotation]; !ok {
			continue
		}
		ref := o.GetKind() + "/" + o.GetName()
		if !isApp(o) {
			out = append(out, Blocker{ID: "depends-on-annotation:" + ref,
				Message:     fmt.Sprintf("%s carries %s, which only an App (%s) carries", ref, DependsOnAnnotation, appcr.Kind.GroupKind()),
				UnblockHint: "move the annotation to the App's object, or remove it"})
			continue
		}
		names, err := DependsOn(o)
		if err != nil {
			out = append(out, Blocker{ID: "depends-on-annotation:" + ref, Message: fmt.Sprintf("%s: %v", ref, err),
				UnblockHint: fmt.Sprintf("set %s to App/name entries separated by commas (at most %d), or remove it", DependsOnAnnotation, maxDependsOn)})
			continue
		}
		for _, n := range names {
			if _, ok := d.needs[n]; !ok {
				out = append(out, Blocker{ID: "depends-on-missing:" + ref,
					Message:     fmt.Sprintf("%s depends on App/%s, which is not in the environment", ref, n),
					UnblockHint: fmt.Sprintf("render App/%s in this environment, or remove it from %s", n, DependsOnAnnotation)})
			}
		}
	}
	for _, c := range d.cycles() {
		first, _, _ := strings.Cut(c, " -> ")
		out = append(out, Blocker{ID: "depends-on-cycle:" + first, Message: "the Apps depend on each other in a cycle: " + c,
			UnblockHint: "remove one of the dependencies of the cycle (" + DependsOnAnnotation + ")"})
	}
	return dedupeBlockers(out)
}
