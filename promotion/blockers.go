package promotion

import "strings"

// GateBlocker is the blocker id an audit record of a refused promotion
// carries for a gate that failed for an App: "<gate>:<app>" (for example
// "source-checks:worker"). The delivery metrics (package insights) read
// a failed promotion check back with ParseGateBlocker.
func GateBlocker(id GateID, app string) string { return string(id) + ":" + app }

// ParseGateBlocker reads a blocker id GateBlocker wrote; ok is false for
// any other blocker id.
func ParseGateBlocker(b string) (id GateID, app string, ok bool) {
	g, a, found := strings.Cut(b, ":")
	if !found || a == "" {
		return "", "", false
	}
	switch GateID(g) {
	case GateSoak, GateChecks, GateNotFrozen, GateRole, GateSecondPerson:
		return GateID(g), a, true
	}
	return "", "", false
}
