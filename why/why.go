// Package why answers "why isn't this App live?": every reason the
// desired version of an App (git's for an App an environment renders, the
// App CR's otherwise) is not running healthy now, in the order a person
// should act on them (Kinds). It decides nothing of its own: each reason
// is the answer of the code that already decides it (the freezes'
// List.Check, the auto-sync loop's pause, the promotion store's pending
// requests, the promotion checks gate, the plan history and its
// report's blockers, the apply Lease's holder, kubeview's health
// culprits, sync verdict and drift), read through the interfaces below,
// composed here once for the JSON API, the app and environment pages and
// the fleet's filter.
package why

import (
	"slices"
	"time"

	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Kind is the kind of a reason.
type Kind string

// The kinds of reasons, in the order a person should act on them.
const (
	// Freeze: a deploy freeze refuses every write to the App.
	Freeze Kind = "freeze"
	// Paused: the auto-sync of the App's environment is paused.
	Paused Kind = "paused"
	// Promotion: a promotion request of the App waits for approval, or
	// its newer version in the source waits for its soak, or the version
	// waiting to be promoted fails its promotion checks.
	Promotion Kind = "promotion"
	// NotApplied: the desired version (commit) is not what runs.
	NotApplied Kind = "not-applied"
	// Blocked: the environment's latest plan is blocked by a gate.
	Blocked Kind = "blocked"
	// Locked: an apply holds the environment's lock.
	Locked Kind = "locked"
	// Waiting: the App depends on another (deployplan.DependsOnAnnotation)
	// that is not healthy, so an apply would wait for it.
	Waiting Kind = "waiting"
	// Health: a resource of the App is not healthy.
	Health Kind = "health"
	// Drift: fields of the App's objects were changed by hand.
	Drift Kind = "drift"
)

// Kinds are every kind, in the order reasons are listed.
var Kinds = [...]Kind{Freeze, Paused, Promotion, NotApplied, Blocked, Locked, Waiting, Health, Drift}

// gate reports whether reasons of kind k hold back a change rather than
// state one: they are named only while the App has something to change
// (a reason of another kind), since a live, healthy App is not held back
// by a freeze or a paused auto-sync.
func (k Kind) gate() bool {
	switch k {
	case Freeze, Paused, Blocked, Locked, Waiting:
		return true
	}
	return false
}

// Reason is one reason the desired version is not running healthy now.
type Reason struct {
	Kind Kind `json:"kind"`
	// Message says it in a person's words, with what to do.
	Message string `json:"message"`
	// Since and Until bound it when known (a freeze's window, a pause's
	// end, a request's age, the lock's lease); null otherwise.
	Since *time.Time `json:"since"`
	Until *time.Time `json:"until"`
	// By is who or what caused it (a freeze's author, the person who
	// paused, the requester, the lock's holder, the field manager).
	By string `json:"by"`
	// Link is the console page to act on it ("" when none).
	Link string `json:"link"`
}

// Answer is the answer for one App.
type Answer struct {
	// App is "namespace/name".
	App string `json:"app"`
	// Desired is the desired version: git's for an App an environment
	// renders, the App CR's otherwise ("" when unknown).
	Desired string `json:"desired"`
	// Live is what runs: the running versions ("" when nothing runs).
	Live string `json:"live"`
	// Reasons are every reason, ordered by Kinds; empty when the App is
	// live and healthy.
	Reasons []Reason `json:"reasons"`
	// Errors name the sources that could not be read: their reasons may
	// be missing.
	Errors []string `json:"errors,omitempty"`
}

// Limits of what an answer carries.
const (
	// maxMessage bounds a reason's message and By, in bytes.
	maxMessage = 1 << 10
	maxBy      = 256
	// maxPerKind bounds the reasons of one kind (blockers, requests).
	maxPerKind = 5
)

// order sorts reasons by Kinds (stable: the order each kind was found in
// stays), drops the gates when nothing else is left to change, bounds
// each kind and cleans every text of control and format characters (the
// messages quote cluster objects, git and people).
func order(rs []Reason) []Reason {
	change := slices.ContainsFunc(rs, func(r Reason) bool { return !r.Kind.gate() })
	out := make([]Reason, 0, len(rs))
	for _, k := range Kinds {
		if k.gate() && !change {
			continue
		}
		n := 0
		for _, r := range rs {
			if r.Kind != k || n == maxPerKind {
				continue
			}
			n++
			r.Message = textfmt.Cut(textfmt.Clean(r.Message, false), maxMessage)
			r.By = textfmt.Cut(textfmt.Clean(r.By, false), maxBy)
			out = append(out, r)
		}
	}
	return out
}

// at is t as an optional time (nil for the zero time).
func at(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
