package audit

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/internal/actor"
)

// Verb is the action a record describes.
type Verb string

// The verbs. Each is also a label value and the reason of the record's
// Event.
const (
	VerbApply          Verb = "apply"
	VerbRestore        Verb = "restore"
	VerbPrune          Verb = "prune"
	VerbRollback       Verb = "rollback"
	VerbSync           Verb = "sync"
	VerbAutoSync       Verb = "auto-sync"
	VerbSelfHeal       Verb = "self-heal"
	VerbFreeze         Verb = "freeze"
	VerbUnfreeze       Verb = "unfreeze"
	VerbPause          Verb = "pause"
	VerbResume         Verb = "resume"
	VerbPromoteRequest Verb = "promote-request"
	VerbPromoteApprove Verb = "promote-approve"
	// VerbPromoteReject is a promotion request turned down.
	VerbPromoteReject Verb = "promote-reject"
	// VerbPromote is the promotion's write itself (the commit, or the
	// apply to the target environment), after its approval.
	VerbPromote Verb = "promote"
	// VerbSubscription is a change of a notification subscription
	// (created, changed or removed).
	VerbSubscription Verb = "subscription"
	// VerbFreezeStart and VerbFreezeEnd are a scheduled freeze window
	// starting and ending by itself (package freeze/freezewatch), where
	// VerbFreeze and VerbUnfreeze are a person creating or ending one.
	VerbFreezeStart Verb = "freeze-start"
	VerbFreezeEnd   Verb = "freeze-end"
	// VerbOperate is a day-2 action on an object of an App's tree
	// (restart, scale, suspend, resume, delete a pod): Objects names the
	// object, Action the operation, Before and After what it changed,
	// Reason the person's reason.
	VerbOperate Verb = "operate"
)

// Verbs lists every verb, in the order above.
func Verbs() []Verb {
	return []Verb{VerbApply, VerbRestore, VerbPrune, VerbRollback, VerbSync, VerbAutoSync, VerbSelfHeal,
		VerbFreeze, VerbUnfreeze, VerbPause, VerbResume, VerbPromoteRequest, VerbPromoteApprove,
		VerbPromoteReject, VerbPromote, VerbSubscription, VerbFreezeStart, VerbFreezeEnd, VerbOperate}
}

// verbLabels are the words the audit page's verb filter shows.
var verbLabels = map[Verb]string{
	VerbApply:          "Apply",
	VerbRestore:        "Restore",
	VerbPrune:          "Prune",
	VerbRollback:       "Rollback",
	VerbSync:           "Sync",
	VerbAutoSync:       "Auto-sync run",
	VerbSelfHeal:       "Self-heal run",
	VerbFreeze:         "Freeze",
	VerbUnfreeze:       "Unfreeze",
	VerbPause:          "Pause",
	VerbResume:         "Resume",
	VerbPromoteRequest: "Promotion requested",
	VerbPromoteApprove: "Promotion approved",
	VerbPromoteReject:  "Promotion rejected",
	VerbPromote:        "Promotion",
	VerbSubscription:   "Subscription change",
	VerbFreezeStart:    "Freeze window started",
	VerbFreezeEnd:      "Freeze window ended",
	VerbOperate:        "Day-2 action",
}

// Label is v in words, for a filter or a heading; an unknown verb is
// its own text.
func (v Verb) Label() string {
	if l, ok := verbLabels[v]; ok {
		return l
	}
	return string(v)
}

// Valid reports whether v is one of Verbs.
func (v Verb) Valid() bool {
	for _, k := range Verbs() {
		if v == k {
			return true
		}
	}
	return false
}

// Outcome is how the action ended.
type Outcome string

// The outcomes: refused is an attempt a gate or a check stopped before any
// write; failed is one that started writing and did not finish;
// interrupted is one its replica stopped between two writes as it shut
// down (the record names what was written).
const (
	OutcomeSucceeded   Outcome = "succeeded"
	OutcomeFailed      Outcome = "failed"
	OutcomeRefused     Outcome = "refused"
	OutcomeInterrupted Outcome = "interrupted"
)

// Valid reports whether o is one of the outcomes.
func (o Outcome) Valid() bool {
	return o == OutcomeSucceeded || o == OutcomeFailed || o == OutcomeRefused || o == OutcomeInterrupted
}

// EngineSubject is the actor subject of what the engine does by itself
// (auto-sync and self-heal runs).
const EngineSubject = "auto-sync"

// EngineActor is the actor of the engine's own runs.
func EngineActor() Actor { return Actor{Subject: EngineSubject} }

// Actor is who acted: the identity of the session or token, or
// EngineActor. It is the one type for it, actor.Actor (its String is the
// one way to print it, its Key what filters, labels and limits count).
type Actor = actor.Actor

// Object names one object a record touched.
type Object struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// ObjectOf names u.
func ObjectOf(u *unstructured.Unstructured) Object {
	gvk := u.GroupVersionKind()
	return Object{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Chain is a record's link to its predecessor in its stream: Prev is the
// hash the record carries, OK whether it matches the predecessor as stored
// now (or the trimmed boundary), Reason why not.
type Chain struct {
	Prev   string `json:"prev"`
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// Duration is a time.Duration that reads and writes JSON as Go's duration
// text ("1.5s").
type Duration time.Duration

// MarshalJSON writes d as its text.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads the text MarshalJSON writes.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("audit: duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("audit: duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// Record is one change, or one refused or failed attempt.
//
// A caller fills everything but ID and Chain and passes it to Store.Append,
// which numbers it, chains it and stores it. Namespace and App name an App
// for records about one App (App is its name); Environment names the
// environment of an environment's records. Manifests are what the action
// applied (or, for prune, deleted); Secrets in them are stored by name and
// hash only.
type Record struct {
	ID             string    `json:"id"`
	Time           time.Time `json:"time"`
	Duration       Duration  `json:"duration"`
	Actor          Actor     `json:"actor"`
	Verb           Verb      `json:"verb"`
	Cluster        string    `json:"cluster"`
	Environment    string    `json:"environment"`
	Namespace      string    `json:"namespace,omitempty"`
	App            string    `json:"app"`
	Commit         string    `json:"commit"`
	RenderedDigest string    `json:"renderedDigest"`
	Outcome        Outcome   `json:"outcome"`
	// Message says why a refused or failed attempt stopped, in the
	// words shown to its user (never raw upstream errors). At most
	// MaxMessageBytes are kept.
	Message string `json:"message,omitempty"`
	// BreakGlass is the reason given to act through a guard that would
	// have refused (a freeze's break-glass); "" when none was broken. At
	// most MaxBreakGlassBytes are kept.
	BreakGlass string `json:"breakGlass,omitempty"`
	// Action, Before, After and Reason are a day-2 action's (VerbOperate):
	// the operation ("scale"), the value it changed before and after
	// ("2 replicas", "3 replicas"), and the reason its person gave. At most
	// MaxFieldBytes (Action, Before, After) and MaxBreakGlassBytes
	// (Reason) are kept.
	Action   string   `json:"action,omitempty"`
	Before   string   `json:"before,omitempty"`
	After    string   `json:"after,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Blockers []string `json:"blockers"`
	// Objects are the objects touched; Append fills them from
	// Manifests when empty.
	Objects []Object `json:"objects"`
	// Chain is set on read; Append ignores it.
	Chain *Chain `json:"chain,omitempty"`
	// Manifests are set by Get, never by List.
	Manifests []*unstructured.Unstructured `json:"-"`
}

// Limits of a record's fields, enforced by Append: longer text is cut,
// longer lists refused (they would not fit the head's annotation).
const (
	MaxMessageBytes    = 1 << 10
	MaxBreakGlassBytes = 1 << 10
	MaxFieldBytes      = 253 // cluster, environment, namespace, app, commit, digest, actor fields
	MaxGroups          = 64
	MaxBlockers        = 256
	MaxObjects         = 2000
)

func (d Duration) std() time.Duration { return time.Duration(d) }
