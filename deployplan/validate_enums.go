package deployplan

import (
	"encoding/json"
	"fmt"
	"strings"
)

var (
	validRegistryStatuses = []string{RegistryVerified, RegistryMissing, RegistryUnreachable, RegistryNotChecked}
	validServiceRegistry  = []string{RegistryPresent, RegistryMissing, RegistryUnreachable, RegistryNotChecked}
	validPublishStatuses  = []string{"published", "unpublished", "none"}
	validCatalogModes     = []string{CatalogModeCommit, CatalogModeVersion}
)

// checkEnums checks the fields whose values are a closed set (the report
// contract, docs/plan-and-apply.md "The report") and the shapes of the optional lists
// (blockers' affected, objects' drift).
func checkEnums(d map[string]any, bad func(string, string, ...any)) {
	oneOf := func(p string, v any, valid []string, optional bool) {
		s, ok := v.(string)
		if !ok {
			if v != nil && !optional {
				return // the schema check reports the type
			}
			return
		}
		if !contains(valid, s) {
			bad(p, "%q is not one of %s", s, strings.Join(valid, ", "))
		}
	}
	oneOf("deployApply.artifactPlan.registryStatus", getPath(d, "artifactPlan", "registryStatus"), validRegistryStatuses, false)
	oneOf("deployApply.artifactPlan.publishStatus", getPath(d, "artifactPlan", "publishStatus"), validPublishStatuses, false)
	oneOf("deployApply.artifactPlan.catalogMode", getPath(d, "artifactPlan", "catalogMode"), validCatalogModes, true)
	for i, s := range getArray(d, "artifactPlan", "services") {
		sm, _ := s.(map[string]any)
		oneOf(fmt.Sprintf("deployApply.artifactPlan.services[%d].registry", i), sm["registry"], validServiceRegistry, true)
	}
	for i, b := range getArray(d, "remainingBlockers") {
		bm, _ := b.(map[string]any)
		if a, present := bm["affected"]; present {
			strList(fmt.Sprintf("deployApply.remainingBlockers[%d].affected", i), a, bad)
		}
	}
	for i, o := range getArray(d, "objects") {
		om, _ := o.(map[string]any)
		p := fmt.Sprintf("deployApply.objects[%d]", i)
		oneOf(p+".action", om["action"], validActions, true)
		checkChanges(p, om, bad)
		dr, present := om["drift"]
		if !present {
			continue
		}
		list, ok := dr.([]any)
		if !ok {
			bad(p+".drift", "is %s, want array", describe(dr))
			continue
		}
		for j, f := range list {
			fm, ok := f.(map[string]any)
			if !ok {
				bad(fmt.Sprintf("%s.drift[%d]", p, j), "is %s, want object", describe(f))
				continue
			}
			for _, k := range []string{"path", "manager", "operation", "live"} {
				if _, ok := fm[k].(string); !ok {
					bad(fmt.Sprintf("%s.drift[%d].%s", p, j, k), "is %s, want string", describe(fm[k]))
				}
			}
		}
	}
}

// checkChanges checks an object's optional changes: each a path, an old
// and a new string, within MaxChanges and MaxChangeValue; a Secret's
// values only as the one change "data" (never a key's path).
func checkChanges(p string, om map[string]any, bad func(string, string, ...any)) {
	if n, present := om["changesOmitted"]; present {
		if num, ok := n.(json.Number); !ok || strings.HasPrefix(num.String(), "-") || strings.Contains(num.String(), ".") {
			bad(p+".changesOmitted", "is %s, want a whole number of at least 0", describe(n))
		}
	}
	v, present := om["changes"]
	if !present {
		return
	}
	list, ok := v.([]any)
	if !ok {
		bad(p+".changes", "is %s, want array", describe(v))
		return
	}
	if len(list) > MaxChanges {
		bad(p+".changes", "has %d entries, more than %d (the rest belong in changesOmitted)", len(list), MaxChanges)
	}
	secret := om["kind"] == "Secret"
	for j, c := range list {
		cp := fmt.Sprintf("%s.changes[%d]", p, j)
		cm, ok := c.(map[string]any)
		if !ok {
			bad(cp, "is %s, want object", describe(c))
			continue
		}
		for _, k := range []string{"path", "old", "new"} {
			s, ok := cm[k].(string)
			if !ok {
				bad(cp+"."+k, "is %s, want string", describe(cm[k]))
				continue
			}
			if k != "path" && len(s) > MaxChangeValue+len("…") {
				bad(cp+"."+k, "is %d bytes, more than %d", len(s), MaxChangeValue)
			}
		}
		if path, _ := cm["path"].(string); secret && path != "data" && (strings.HasPrefix(path, "data") || strings.HasPrefix(path, "stringData")) {
			bad(cp+".path", "%q names a Secret key: a Secret's values are one change \"data\", by hash", path)
		}
	}
}

func strList(p string, v any, bad func(string, string, ...any)) {
	list, ok := v.([]any)
	if !ok {
		bad(p, "is %s, want array", describe(v))
		return
	}
	for i, e := range list {
		if _, ok := e.(string); !ok {
			bad(fmt.Sprintf("%s[%d]", p, i), "is %s, want string", describe(e))
		}
	}
}
