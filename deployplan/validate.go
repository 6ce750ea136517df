package deployplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Violation is one way a report breaks the contract.
type Violation struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (v Violation) String() string { return v.Path + ": " + v.Message }

type jsonType int

const (
	tString jsonType = iota
	tNumber
	tBool
	tObject
	tArray
)

func (t jsonType) String() string {
	return [...]string{"string", "number", "boolean", "object", "array"}[t]
}

// field is a schema node: a required key with its type.
type field struct {
	name     string
	t        jsonType
	nullable bool
	fields   []field // of an object, or of each element of an array of objects
	elem     *jsonType
}

func str(n string) field              { return field{name: n, t: tString} }
func obj(n string, fs ...field) field { return field{name: n, t: tObject, fields: fs} }
func strs(n string) field             { s := tString; return field{name: n, t: tArray, elem: &s} }
func objs(n string, fs ...field) field {
	o := tObject
	return field{name: n, t: tArray, elem: &o, fields: fs}
}

// reportSchema is the contract of the issue: every key required, with its
// type.
var reportSchema = obj("deployApply",
	obj("conclusion", str("status"), str("summary")),
	obj("applyBoundary",
		str("defaultMode"), strs("requiredApplyFlags"),
		obj("writeScope", str("namespace"), strs("kinds")),
		strs("noWriteScope"), strs("forbiddenActions")),
	obj("artifactPlan",
		str("expectedArtifactCommit"), str("sourceCommit"), str("deployCommit"), str("catalogCommit"),
		str("publishStatus"), str("registryStatus"), strs("unpublishedServices")),
	obj("target", str("cluster"), str("namespace")),
	objs("workloadPlan", str("kind"), str("name"), objs("containers", str("name"), str("image")),
		field{name: "replicas", t: tNumber, nullable: true}, str("action")),
	objs("servicePlan", str("name"), str("serviceId"), field{name: "ports", t: tArray}),
	obj("templateJobReplacementPolicy", strs("allowlist"), str("namespace"), strs("rules")),
	objs("templateJobReplacements", str("namespace"), str("job"), str("oldImage"), str("newImage"), str("result"), str("reason")),
	strs("manualCommands"),
	obj("rollbackHint", str("preApplyCapture"), strs("deploymentRollbacks"), strs("suspendedJobCleanup"), strs("postRollbackHealthChecks")),
	objs("remainingBlockers", str("id"), str("message"), str("unblockHint")),
	obj("source", str("commit"), str("renderedDigest")),
)

var (
	validStatuses   = []string{StatusBlocked, StatusReady, StatusApplied, StatusFailed, StatusRefused}
	validJobResults = []string{JobPlanned, JobReplaced, JobNotNeeded, JobNotFound, JobBlockedNotSuspended, JobBlockedNotAllowlisted, JobFailed}
	validActions    = []string{ActionCreate, ActionUpdate, ActionUnchanged, ActionReplace, ActionBlocked, ActionUnknown}
)

// ValidateReport checks a JSON report against the contract: every field
// present with the right type; blocked if and only if remainingBlockers is
// non-empty; an apply command only in a ready plan of an unprotected
// environment; every planned or replaced Job allowlisted, suspended and in
// the target namespace; no Secret payload anywhere. It returns the
// violations, sorted; none means the report is valid.
func ValidateReport(data []byte) []Violation {
	var root any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return []Violation{{Path: "$", Message: "not JSON: " + err.Error()}}
	}
	top, ok := root.(map[string]any)
	if !ok {
		return []Violation{{Path: "$", Message: "not a JSON object"}}
	}
	var vs []Violation
	bad := func(path, format string, a ...any) {
		vs = append(vs, Violation{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	checkField(top, reportSchema, "", bad)
	d, ok := top["deployApply"].(map[string]any)
	if !ok {
		return sortViolations(vs)
	}
	checkInvariants(d, bad)
	findSecretPayload(d, "deployApply", bad)
	return sortViolations(vs)
}

func sortViolations(vs []Violation) []Violation {
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Path < vs[j].Path })
	return vs
}

func typeOf(v any) (jsonType, bool) {
	switch v.(type) {
	case string:
		return tString, true
	case json.Number, float64:
		return tNumber, true
	case bool:
		return tBool, true
	case map[string]any:
		return tObject, true
	case []any:
		return tArray, true
	}
	return 0, false
}

func checkField(parent map[string]any, f field, prefix string, bad func(string, string, ...any)) {
	path := f.name
	if prefix != "" {
		path = prefix + "." + f.name
	}
	v, present := parent[f.name]
	if !present {
		bad(path, "missing (want %s)", f.t)
		return
	}
	if v == nil {
		if !f.nullable {
			bad(path, "is null (want %s)", f.t)
		}
		return
	}
	t, _ := typeOf(v)
	if t != f.t {
		bad(path, "is %s, want %s", describe(v), f.t)
		return
	}
	switch f.t {
	case tObject:
		m := v.(map[string]any)
		for _, sub := range f.fields {
			checkField(m, sub, path, bad)
		}
	case tArray:
		for i, e := range v.([]any) {
			ep := fmt.Sprintf("%s[%d]", path, i)
			if f.elem == nil {
				continue
			}
			et, _ := typeOf(e)
			if e == nil || et != *f.elem {
				bad(ep, "is %s, want %s", describe(e), *f.elem)
				continue
			}
			if *f.elem == tObject {
				m := e.(map[string]any)
				for _, sub := range f.fields {
					checkField(m, sub, ep, bad)
				}
			}
		}
	}
}

func describe(v any) string {
	if v == nil {
		return "null"
	}
	if t, ok := typeOf(v); ok {
		return t.String()
	}
	return fmt.Sprintf("%T", v)
}

func getPath(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

func getString(m map[string]any, keys ...string) string {
	s, _ := getPath(m, keys...).(string)
	return s
}

func getArray(m map[string]any, keys ...string) []any {
	a, _ := getPath(m, keys...).([]any)
	return a
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func checkInvariants(d map[string]any, bad func(string, string, ...any)) {
	status := getString(d, "conclusion", "status")
	if _, isStr := getPath(d, "conclusion", "status").(string); isStr && !contains(validStatuses, status) {
		bad("deployApply.conclusion.status", "%q is not one of %s", status, strings.Join(validStatuses, ", "))
	}
	blockers := getArray(d, "remainingBlockers")
	switch {
	case status == StatusBlocked && len(blockers) == 0:
		bad("deployApply.conclusion.status", "is blocked but remainingBlockers is empty")
	case status != StatusBlocked && status != StatusRefused && status != "" && len(blockers) > 0:
		bad("deployApply.remainingBlockers", "has %d blocker(s) but the status is %q, not blocked", len(blockers), status)
	}
	for i, b := range blockers {
		bm, _ := b.(map[string]any)
		for _, k := range []string{"id", "message", "unblockHint"} {
			if s, ok := bm[k].(string); ok && strings.TrimSpace(s) == "" {
				bad(fmt.Sprintf("deployApply.remainingBlockers[%d].%s", i, k), "is empty")
			}
		}
	}
	if dg, ok := getPath(d, "source", "renderedDigest").(string); ok && !validDigest(dg) && (status != StatusRefused || dg != "") {
		bad("deployApply.source.renderedDigest", "%q is not sha256:<64 hex digits>", dg)
	}
	if sc, ok := getPath(d, "source", "commit").(string); ok {
		if ac, ok := getPath(d, "artifactPlan", "sourceCommit").(string); ok && ac != sc {
			bad("deployApply.source.commit", "%q differs from artifactPlan.sourceCommit %q", sc, ac)
		}
	}
	protected, _ := getPath(d, "target", "protected").(bool)
	for i, c := range getArray(d, "manualCommands") {
		cs, _ := c.(string)
		if !isApplyCommand(cs) {
			continue
		}
		p := fmt.Sprintf("deployApply.manualCommands[%d]", i)
		if status != StatusReady {
			bad(p, "is an apply command but the status is %q, not ready", status)
		}
		if protected {
			bad(p, "is an apply command but the environment is protected")
		}
	}
	if m := getString(d, "applyBoundary", "defaultMode"); m != "" && m != "no-write" {
		bad("deployApply.applyBoundary.defaultMode", "is %q, want \"no-write\"", m)
	}
	ns := getString(d, "target", "namespace")
	if ws := getString(d, "applyBoundary", "writeScope", "namespace"); ws != ns {
		bad("deployApply.applyBoundary.writeScope.namespace", "is %q but the target namespace is %q", ws, ns)
	}
	var allow []string
	for _, a := range getArray(d, "templateJobReplacementPolicy", "allowlist") {
		if s, ok := a.(string); ok {
			allow = append(allow, s)
		}
	}
	policyNS := getString(d, "templateJobReplacementPolicy", "namespace")
	if policyNS != ns {
		bad("deployApply.templateJobReplacementPolicy.namespace", "is %q but the target namespace is %q", policyNS, ns)
	}
	for i, j := range getArray(d, "templateJobReplacements") {
		jm, ok := j.(map[string]any)
		if !ok {
			continue
		}
		p := fmt.Sprintf("deployApply.templateJobReplacements[%d]", i)
		res, _ := jm["result"].(string)
		if _, isStr := jm["result"].(string); isStr && !contains(validJobResults, res) {
			bad(p+".result", "%q is not one of %s", res, strings.Join(validJobResults, ", "))
		}
		if res != JobPlanned && res != JobReplaced {
			if status == StatusApplied && res == JobFailed {
				bad(p+".result", "is failed but the report says applied")
			}
			continue
		}
		name, _ := jm["job"].(string)
		if !contains(allow, name) {
			bad(p, "Job %q is %s but not in the allowlist", name, res)
		}
		if s, _ := jm["suspended"].(bool); !s {
			bad(p, "Job %q is %s but not recorded as suspended", name, res)
		}
		if jns, _ := jm["namespace"].(string); jns != ns || jns == "" {
			bad(p, "Job %q is %s in namespace %q, not the target namespace %q", name, res, jns, ns)
		}
		if res == JobReplaced && status != StatusApplied && status != StatusFailed {
			bad(p+".result", "is replaced in a report whose status is %q (only an apply replaces)", status)
		}
	}
	for i, w := range getArray(d, "workloadPlan") {
		wm, _ := w.(map[string]any)
		if a, ok := wm["action"].(string); ok && !contains(validActions, a) {
			bad(fmt.Sprintf("deployApply.workloadPlan[%d].action", i), "%q is not one of %s", a, strings.Join(validActions, ", "))
		}
	}
	checkOrphans(d, bad)
	if status == StatusApplied {
		for i, o := range getArray(d, "objects") {
			om, _ := o.(map[string]any)
			if r, _ := om["result"].(string); r == "failed" {
				bad(fmt.Sprintf("deployApply.objects[%d].result", i), "is failed but the report says applied")
			}
		}
	}
}

// findSecretPayload flags any "data" or "stringData" key: a report never
// carries object payloads, least of all a Secret's.
func findSecretPayload(v any, path string, bad func(string, string, ...any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := path + "." + k
			if k == "data" || k == "stringData" || k == "binaryData" {
				bad(p, "a report must not carry object data (Secret values are never stored)")
				continue
			}
			findSecretPayload(e, p, bad)
		}
	case []any:
		for i, e := range x {
			findSecretPayload(e, fmt.Sprintf("%s[%d]", path, i), bad)
		}
	}
}

// validDigest reports whether s is "sha256:" and 64 lower-case hex digits.
func validDigest(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkOrphans checks the optional orphans list (reports before it existed
// have none): objects with a kind, a name and a hint.
func checkOrphans(d map[string]any, bad func(string, string, ...any)) {
	v, present := d["orphans"]
	if !present {
		return
	}
	list, ok := v.([]any)
	if !ok {
		bad("deployApply.orphans", "is %s, want array", describe(v))
		return
	}
	for i, o := range list {
		om, ok := o.(map[string]any)
		if !ok {
			bad(fmt.Sprintf("deployApply.orphans[%d]", i), "is %s, want object", describe(o))
			continue
		}
		for _, k := range []string{"kind", "name", "hint"} {
			if s, ok := om[k].(string); !ok || s == "" {
				bad(fmt.Sprintf("deployApply.orphans[%d].%s", i, k), "missing or empty (want string)")
			}
		}
	}
}
