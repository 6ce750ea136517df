package objrules

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/hanzoai/deploy-web/internal/managedfields"
)

// SetIn reports whether obj (an object as rendered from git) sets the
// field d names: a heal puts such a field back by applying git's value;
// any other drifted field is one git does not set, which only a removal
// heals.
func (d DriftField) SetIn(obj map[string]any) bool {
	if d.at == nil {
		return false
	}
	_, ok := lookupPath(obj, d.at)
	return ok
}

// RemovePatch is the JSON patch (RFC 6902) that removes d's field from
// live and nothing else: a "test" of the field's live value at its
// position, then a "remove". The test makes the write fail, changing
// nothing, when the object moved since it was read (another element now
// at that index, another value). ok is false when the field cannot be
// addressed in live (gone already, or a path kind a JSON pointer cannot
// name).
func (d DriftField) RemovePatch(live map[string]any) (patch []byte, ok bool) {
	if len(d.at) == 0 {
		return nil, false
	}
	var ptr strings.Builder
	var cur any = live
	for _, pe := range d.at {
		switch {
		case pe.FieldName != nil:
			m, isMap := cur.(map[string]any)
			if !isMap {
				return nil, false
			}
			v, has := m[*pe.FieldName]
			if !has {
				return nil, false
			}
			ptr.WriteString("/" + pointerEscape(*pe.FieldName))
			cur = v
		default:
			l, isList := cur.([]any)
			if !isList {
				return nil, false
			}
			i := -1
			if pe.Index != nil {
				if *pe.Index >= 0 && *pe.Index < len(l) {
					i = *pe.Index
				}
			} else {
				for j, el := range l {
					if managedfields.Matches(el, pe) {
						i = j
						break
					}
				}
			}
			if i < 0 {
				return nil, false
			}
			ptr.WriteString("/" + strconv.Itoa(i))
			cur = l[i]
		}
	}
	ops := []map[string]any{{"op": "test", "path": ptr.String(), "value": cur}, {"op": "remove", "path": ptr.String()}}
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, false
	}
	return b, true
}

// pointerEscape escapes a JSON pointer token (RFC 6901).
func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
