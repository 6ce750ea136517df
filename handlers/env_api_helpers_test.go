package handlers

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/hanzoai/deploy-web/web/paths"
)

// envRollbackAnswer is the JSON of an environment rollback, as the tests
// read it.
type envRollbackAnswer struct {
	Commit struct{ SHA string }
	Paths  []string
	Run    *struct{ ID string }
}

// postEnvRollback rolls env back to apply record to through the API, as
// an admin, and fails unless it answers 200 with a commit and its run.
func postEnvRollback(t *testing.T, ts *testServer, env, to, reason string) envRollbackAnswer {
	t.Helper()
	body, err := json.Marshal(map[string]string{"to": to, "reason": reason})
	if err != nil {
		t.Fatal(err)
	}
	w := ts.do(t, request{method: "POST", target: paths.APIEnvRollback(env), admin: true, header: jsonHeader, body: string(body)})
	var res envRollbackAnswer
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &res) != nil || res.Commit.SHA == "" || res.Run == nil {
		t.Fatalf("rollback of %s to %s = %d %s, want 200 with a commit and its run", env, to, w.Code, w.Body)
	}
	return res
}

// recordsDiff is the diff of env's apply records from..to through the
// API: the status ("changed", ...) and the diff of resource kind/name;
// it fails unless the answer is 200 with changes.
func recordsDiff(t *testing.T, ts *testServer, env, from, to, kind, name string) (status, diff string) {
	t.Helper()
	w := ts.get(t, paths.APIEnvDiff(env, url.Values{"from": {from}, "to": {to}}), nil)
	var rep struct {
		Changes   bool
		Resources []struct{ Kind, Name, Status, Diff string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil || w.Code != 200 || !rep.Changes {
		t.Fatalf("diff %s..%s = %d %s, want changes", from, to, w.Code, w.Body)
	}
	for _, r := range rep.Resources {
		if r.Kind == kind && r.Name == name {
			return r.Status, r.Diff
		}
	}
	t.Fatalf("diff %s..%s = %+v, want %s %s in it", from, to, rep.Resources, kind, name)
	return "", ""
}
