package promotion

import "testing"

func TestGateBlockerRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in     string
		id     GateID
		app    string
		wantOK bool
	}{
		{GateBlocker(GateChecks, "worker"), GateChecks, "worker", true},
		{GateBlocker(GateSoak, "a:b"), GateSoak, "a:b", true},
		{"source-checks:", "", "", false},
		{"unknown-gate:api", "", "", false},
		{"deployment:apps/Deployment/x", "", "", false},
		{"", "", "", false},
	} {
		id, app, ok := ParseGateBlocker(tc.in)
		if id != tc.id || app != tc.app || ok != tc.wantOK {
			t.Errorf("ParseGateBlocker(%q) = %q, %q, %v, want %q, %q, %v", tc.in, id, app, ok, tc.id, tc.app, tc.wantOK)
		}
	}
}
