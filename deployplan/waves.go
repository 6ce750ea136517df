package deployplan

import (
	"fmt"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/deployplan/helmrender"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// WaveAnnotation orders an object's apply against the others: the
// objects of a lower wave are written, and their workloads healthy,
// before any object of a higher one. Its value is an integer from
// -MaxWave to MaxWave; without it an object is in wave 0.
const WaveAnnotation = "deploy-web.hanzo.ai/wave"

// MaxWave bounds a wave's number either side of 0.
const MaxWave = 1000

// writeParallelism bounds the objects of one step an apply writes at the
// same time (as dryRunParallelism bounds the plan's reads).
const writeParallelism = 8

// Kind groups, in apply order (kapp's): what other objects need exists
// before them. KindGroup maps a kind to one.
const (
	GroupCRDs = iota
	GroupNamespaces
	GroupRBAC
	GroupConfig
	GroupStorage
	GroupServices
	GroupWorkloads
	GroupRest
)

// KindGroup is the one apply order of kinds: CRDs, Namespaces, RBAC and
// ServiceAccounts, ConfigMaps and Secrets, storage claims, Services,
// workloads, then the rest (Ingresses, autoscalers, budgets, custom
// resources). Inside a wave the groups are written one after the other,
// the objects of one group in parallel; deletions (prune) go in the
// reverse order. It returns the group and its name for the report.
func KindGroup(kind string) (int, string) {
	switch kind {
	case "CustomResourceDefinition":
		return GroupCRDs, "CRDs"
	case "Namespace":
		return GroupNamespaces, "Namespaces"
	case "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
		return GroupRBAC, "RBAC and ServiceAccounts"
	case "ConfigMap", "Secret":
		return GroupConfig, "ConfigMaps and Secrets"
	case "PersistentVolumeClaim":
		return GroupStorage, "storage"
	case "Service":
		return GroupServices, "Services"
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod", "Job", "CronJob":
		return GroupWorkloads, "workloads"
	}
	return GroupRest, "the rest"
}

// waveOf is o's wave (WaveAnnotation, 0 without it) or why its
// annotation is refused: not an integer, or beyond MaxWave either side.
func waveOf(o *unstructured.Unstructured) (int, error) {
	v, ok := o.GetAnnotations()[WaveAnnotation]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("annotation %s is %q: not an integer", WaveAnnotation, textfmt.Cut(v, 40))
	}
	if n < -MaxWave || n > MaxWave {
		return 0, fmt.Errorf("annotation %s is %d: out of range (-%d to %d)", WaveAnnotation, n, MaxWave, MaxWave)
	}
	return n, nil
}

// WaveCheck returns a blocker naming every object whose wave annotation
// is refused (waveOf): the plan cannot say when it applies.
func WaveCheck(objs []*unstructured.Unstructured) []Blocker {
	var out []Blocker
	for _, o := range objs {
		if _, err := waveOf(o); err != nil {
			ref := o.GetKind() + "/" + o.GetName()
			out = append(out, Blocker{ID: "wave-annotation:" + ref,
				Message:     fmt.Sprintf("%s: %v", ref, err),
				UnblockHint: fmt.Sprintf("set %s to an integer from -%d to %d (a quoted string: \"1\"), or remove it for wave 0", WaveAnnotation, MaxWave, MaxWave)})
		}
	}
	return dedupeBlockers(out)
}

// applyRank is where an object applies: its Helm hook phase and weight,
// its App's stage (depends.go), its wave, its kind group.
type applyRank struct {
	hook  hookRank
	stage int
	wave  int
	group int
}

func rankOf(o *unstructured.Unstructured, d *appDeps) applyRank {
	w, _ := waveOf(o) // a refused annotation blocks the plan: 0 is only for its order
	g, _ := KindGroup(o.GetKind())
	return applyRank{hook: hookOrder(o), stage: d.stageOf(o), wave: w, group: g}
}

// sameWave says whether a and b are in one wave: the same hook phase and
// weight, the same App stage and the same wave number.
func (a applyRank) sameWave(b applyRank) bool {
	return a.hook == b.hook && a.stage == b.stage && a.wave == b.wave
}

func (a applyRank) less(b applyRank) bool {
	if a.hook != b.hook {
		return a.hook.less(b.hook)
	}
	if a.stage != b.stage {
		return a.stage < b.stage
	}
	if a.wave != b.wave {
		return a.wave < b.wave
	}
	return a.group < b.group
}

// sortForApply orders objects for an apply: Helm's pre-install and
// pre-upgrade hooks first, post- hooks last (each phase by hook weight),
// then by their App's stage (an App after the Apps it depends on, d: nil
// for none), then by wave (WaveAnnotation), then by kind group
// (KindGroup); the render's order is kept among equals.
func sortForApply(objs []*unstructured.Unstructured, d *appDeps) {
	sort.SliceStable(objs, func(i, j int) bool { return rankOf(objs[i], d).less(rankOf(objs[j], d)) })
}

// wave is one wave of an apply: its steps (one per kind group, in order),
// each a set of objects written in parallel. The first wave of an App
// stage carries the Apps its Apps depend on (waitsFor) and their objects
// the apply waits for before it (waitObjs).
type wave struct {
	rank     applyRank // of its first step
	steps    [][]*unstructured.Unstructured
	apps     []string // the Apps of a stage after the first ("" for stage 0)
	waitsFor []string
	waitObjs []*unstructured.Unstructured
}

// objects are the wave's objects in write order.
func (w wave) objects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, s := range w.steps {
		out = append(out, s...)
	}
	return out
}

// wavesOf splits objects sorted by sortForApply into waves and steps;
// the first wave of each App stage gets what its Apps wait for (d's
// dependencies).
func wavesOf(objs []*unstructured.Unstructured, d *appDeps) []wave {
	out := splitWaves(objs, d)
	prevStage := 0
	for i := range out {
		w := &out[i]
		if w.rank.stage > 0 {
			w.apps = d.appsIn(w.objects())
		}
		if w.rank.stage != prevStage {
			var stageObjs []*unstructured.Unstructured
			for j := i; j < len(out) && out[j].rank.stage == w.rank.stage; j++ {
				stageObjs = append(stageObjs, out[j].objects()...)
			}
			w.waitsFor, w.waitObjs = d.waitsFor(stageObjs)
		}
		prevStage = w.rank.stage
	}
	return out
}

// splitWaves splits objects sorted by sortForApply into waves and steps.
func splitWaves(objs []*unstructured.Unstructured, d *appDeps) []wave {
	var out []wave
	var last applyRank
	for i, o := range objs {
		r := rankOf(o, d)
		switch {
		case i == 0 || !r.sameWave(last):
			out = append(out, wave{rank: r, steps: [][]*unstructured.Unstructured{{o}}})
		case r.group != last.group:
			w := &out[len(out)-1]
			w.steps = append(w.steps, []*unstructured.Unstructured{o})
		default:
			w := &out[len(out)-1]
			w.steps[len(w.steps)-1] = append(w.steps[len(w.steps)-1], o)
		}
		last = r
	}
	return out
}

// Wave results in the report (WavePlan.Result).
const (
	WaveApplied    = "applied"
	WaveFailed     = "failed"
	WaveUnhealthy  = "unhealthy"
	WaveNotStarted = "not-started"
)

// WavePlan is one wave of the plan: what it writes, in order, and the
// workloads that must be healthy before the next wave starts; after an
// apply, its result.
type WavePlan struct {
	Wave int `json:"wave"`
	// Hook is the Helm hook phase of its objects ("pre" or "post"), ""
	// for the objects that are no hook.
	Hook string `json:"hook,omitempty"`
	// Apps are, for the waves of Apps that depend on others
	// (DependsOnAnnotation), the Apps whose objects it writes ("App/b").
	Apps []string `json:"apps,omitempty"`
	// WaitsFor are, on the first wave of such Apps, the Apps that must be
	// healthy before it starts ("App/a").
	WaitsFor []string `json:"waitsFor,omitempty"`
	// Objects are "Kind/name", in write order: kind group by kind group.
	Objects []string `json:"objects"`
	// Workloads are the objects whose health gates the next wave.
	Workloads []string `json:"workloads"`
	// Result is, after an apply, applied, failed (a write failed),
	// unhealthy (written, but its workloads did not get healthy) or
	// not-started; Message says which object and why.
	Result  string `json:"result,omitempty"`
	Message string `json:"message,omitempty"`
}

// wavePlans is the report's form of waves.
func wavePlans(ws []wave) []WavePlan {
	out := make([]WavePlan, 0, len(ws))
	for _, w := range ws {
		p := WavePlan{Wave: w.rank.wave, Objects: []string{}, Workloads: []string{}, Apps: appRefs(w.apps), WaitsFor: appRefs(w.waitsFor)}
		switch w.rank.hook.phase {
		case helmrender.PhasePre:
			p.Hook = "pre"
		case helmrender.PhasePost:
			p.Hook = "post"
		}
		for _, o := range w.objects() {
			ref := o.GetKind() + "/" + o.GetName()
			p.Objects = append(p.Objects, ref)
			if waited(o) {
				p.Workloads = append(p.Workloads, ref)
			}
		}
		out = append(out, p)
	}
	return out
}

// appRefs are the Apps names as "App/name".
func appRefs(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = appRefPrefix + n
	}
	return out
}

// pruneOrder is the order orphans are deleted in: the reverse of the
// apply's kind groups (what uses an object goes before it), the given
// order among equals. It returns the indices of orphans.
func pruneOrder(orphans []Orphan) []int {
	idx := make([]int, len(orphans))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ga, _ := KindGroup(orphans[idx[a]].Kind)
		gb, _ := KindGroup(orphans[idx[b]].Kind)
		return ga > gb
	})
	return idx
}

// waveLines are the waves for the terminal, one line each: nil for a
// single wave that did not fail (the plan has no order to show).
func waveLines(ws []WavePlan) []string {
	show := len(ws) > 1
	for _, w := range ws {
		show = show || (w.Result != "" && w.Result != WaveApplied) || len(w.WaitsFor) > 0
	}
	if !show {
		return nil
	}
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		line := waveName(w) + ": "
		if len(w.WaitsFor) > 0 {
			line += "once " + affectedList(w.WaitsFor, 10) + " healthy, "
		}
		line += affectedList(w.Objects, 10)
		if len(w.Workloads) > 0 {
			line += " (then waits for " + affectedList(w.Workloads, 10) + ")"
		}
		if w.Result != "" {
			line += " -> " + w.Result
			if w.Message != "" {
				line += ": " + w.Message
			}
		}
		out = append(out, line)
	}
	return out
}

// waveName is "wave N", with its Helm hook phase when it has one and its
// Apps when they depend on others ("wave 0 of App/b").
func waveName(w WavePlan) string {
	n := fmt.Sprintf("wave %d", w.Wave)
	if len(w.Apps) > 0 {
		n += " of " + affectedList(w.Apps, 3)
	}
	if w.Hook != "" {
		n += fmt.Sprintf(" (%s- hooks)", w.Hook)
	}
	return n
}
