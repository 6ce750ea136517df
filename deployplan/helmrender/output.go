package helmrender

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/internal/yamlbudget"
)

// HookAnnotation marks a Helm hook.
const HookAnnotation = "helm.sh/hook"

// HookWeightAnnotation orders hooks of one phase.
const HookWeightAnnotation = "helm.sh/hook-weight"

// Hook phases (HookPhase).
const (
	// PhasePre: pre-install / pre-upgrade hooks, applied before the rest.
	PhasePre = -1
	// PhaseMain: every object that is not a hook.
	PhaseMain = 0
	// PhasePost: post-install / post-upgrade hooks, applied after the rest.
	PhasePost = 1
)

// hookEvents splits an object's helm.sh/hook annotation.
func hookEvents(o *unstructured.Unstructured) []string {
	v, ok := o.GetAnnotations()[HookAnnotation]
	if !ok {
		return nil
	}
	var out []string
	for e := range strings.SplitSeq(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// HookPhase says when an object applies: PhasePre for a pre-install or
// pre-upgrade hook, PhasePost for a post-install or post-upgrade hook,
// PhaseMain otherwise. deploy-web applies every time as an upgrade would,
// so a hook of either event applies every time.
func HookPhase(o *unstructured.Unstructured) int {
	ev := hookEvents(o)
	switch {
	case slices.Contains(ev, "pre-install") || slices.Contains(ev, "pre-upgrade"):
		return PhasePre
	case slices.Contains(ev, "post-install") || slices.Contains(ev, "post-upgrade"):
		return PhasePost
	}
	return PhaseMain
}

// hookKept says whether a rendered object is kept: not a hook, or an
// install/upgrade hook. Test hooks and hooks of events deploy-web never
// has (delete, rollback) are left out with a warning.
func hookKept(o *unstructured.Unstructured) (bool, string) {
	ev := hookEvents(o)
	if len(ev) == 0 {
		if _, ok := o.GetAnnotations()[HookAnnotation]; ok {
			return false, "an empty helm.sh/hook annotation: left out"
		}
		return true, ""
	}
	if HookPhase(o) != PhaseMain {
		return true, ""
	}
	if isTestHook(o) {
		return false, "a test hook (helm.sh/hook: " + strings.Join(ev, ",") + "): left out, deploy-web does not run chart tests"
	}
	return false, "a hook of " + strings.Join(ev, ",") + ": left out, deploy-web applies only install and upgrade hooks"
}

// isTestHook reports whether o is a chart test (helm.sh/hook: test,
// test-success or test-failure).
func isTestHook(o *unstructured.Unstructured) bool {
	ev := hookEvents(o)
	return slices.Contains(ev, "test") || slices.Contains(ev, "test-success") || slices.Contains(ev, "test-failure")
}

// parseManifest decodes a rendered template (or a CRD file) into objects,
// after checking it against its YAML budget. Empty documents are skipped.
func parseManifest(name, file string, data []byte) ([]*unstructured.Unstructured, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if _, err := yamlbudget.Check(file, data, yamlbudget.Budget{}); err != nil {
		return nil, &Error{Chart: name, File: file, Reason: "the rendered manifest is " + budgetReason(err), Hint: "fix the template or the values it renders"}
	}
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &Error{Chart: name, File: file, Reason: "the rendered manifest does not split into documents: " + err.Error(), Hint: "fix the template"}
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, &Error{Chart: name, File: file, Reason: "the rendered manifest is not YAML: " + err.Error(), Hint: "fix the template"}
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, &Error{Chart: name, File: file, Reason: "the rendered manifest is not a Kubernetes object: " + err.Error(), Hint: "fix the template"}
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, &Error{Chart: name, File: file, Reason: "a rendered object has no kind or no name", Hint: "fix the template"}
		}
		if u.IsList() {
			return nil, &Error{Chart: name, File: file, Reason: "a rendered object is a List", Hint: "render its items as documents of their own"}
		}
		out = append(out, u)
	}
	return out, nil
}
