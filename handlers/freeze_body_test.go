package handlers

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONProblem: what is wrong with a freeze's body is named from the
// decoder's typed errors and the request's type, a key no field takes
// quoted and cut (at any depth, in document order), never the decoder's
// text.
func TestJSONProblem(t *testing.T) {
	long := strings.Repeat("k", 100)
	for _, tt := range []struct {
		name, body, want string
	}{
		{"unknown top-level key", `{"reason": "x", "id": "fz-mine"}`, `unknown field "id" (id, author and created are set by the server)`},
		{"first unknown key in document order", `{"zz": 1, "author": 2}`, `unknown field "zz" (id, author and created are set by the server)`},
		{"unknown key in the scope", `{"scope": {"environments": ["prod"], "teams": ["a"]}}`, `unknown field "teams" (id, author and created are set by the server)`},
		{"key of another case is the field", `{"Reason": "x", "created": 1}`, `unknown field "created" (id, author and created are set by the server)`},
		{"long hostile key cut", `{"` + long + `\u202e": 1}`, `unknown field "` + strings.Repeat("k", 40) + `…" (id, author and created are set by the server)`},
		{"wrong type", `{"reason": 5}`, "field reason has the wrong type"},
		{"not JSON", `{"reason": }`, "not JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var q freezeRequest
			dec := json.NewDecoder(strings.NewReader(tt.body))
			dec.DisallowUnknownFields()
			err := dec.Decode(&q)
			if err == nil {
				t.Fatalf("Decode(%s) = nil, want an error", tt.body)
			}
			if got := jsonProblem(err, []byte(tt.body), &q); got != tt.want {
				t.Errorf("jsonProblem(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}
