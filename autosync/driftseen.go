package autosync

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// DriftSeen turns "what is drifted now" (the drift model, kubeview's
// DriftOf, has no time) into DriftedObjects with the time each was first
// seen drifted: a Drift source is a DriftSeen fed by a listing of the
// environment's drifted objects. An object no longer drifted is
// forgotten, so a new drift starts a new grace period. It remembers in
// memory: after a restart, drifts count from when they are seen again
// (a heal comes at most one grace period later). Safe for concurrent use.
type DriftSeen struct {
	mu    sync.Mutex
	since map[string]map[string]time.Time // env -> ref -> first seen
}

// NewDriftSeen returns an empty DriftSeen.
func NewDriftSeen() *DriftSeen {
	return &DriftSeen{since: map[string]map[string]time.Time{}}
}

// Observe records that refs are env's drifted objects at now and returns
// them with when each was first seen, sorted by Ref. It keeps one time
// per ref drifted now, nothing else.
func (d *DriftSeen) Observe(env string, refs []string, now time.Time) []DriftedObject {
	d.mu.Lock()
	defer d.mu.Unlock()
	prev := d.since[env]
	cur := make(map[string]time.Time, len(refs))
	out := make([]DriftedObject, 0, len(refs))
	for _, r := range refs {
		if _, dup := cur[r]; dup {
			continue
		}
		s, ok := prev[r]
		if !ok {
			s = now
		}
		cur[r] = s
		out = append(out, DriftedObject{Ref: r, Since: s})
	}
	if len(cur) == 0 {
		delete(d.since, env)
	} else {
		d.since[env] = cur
	}
	slices.SortFunc(out, func(a, b DriftedObject) int { return strings.Compare(a.Ref, b.Ref) })
	return out
}
