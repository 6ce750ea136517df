package timeline

import (
	"strings"
	"time"
	"unicode/utf8"
)

// App names one App of the fleet. Cluster is empty for a single-cluster
// console (as kubeview.AppRow.Cluster is).
type App struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String returns "cluster/namespace/name" ("namespace/name" without a
// cluster), for messages.
func (a App) String() string {
	if a.Cluster == "" {
		return a.Namespace + "/" + a.Name
	}
	return a.Cluster + "/" + a.Namespace + "/" + a.Name
}

// Kind is the kind of an entry: a closed set.
type Kind string

// The kinds of entries.
const (
	// KindHealth is a change of the App's health code (From, To: codes).
	KindHealth Kind = "health"
	// KindSync is a change of the App's sync verdict (From, To: verdicts).
	KindSync Kind = "sync"
	// KindDrift is drift appearing (To "drifted") or clearing (To "clean").
	KindDrift Kind = "drift"
	// KindRestart is a container that restarted (Ref pod/container, From
	// and To the restart counts).
	KindRestart Kind = "restart"
	// KindOOM is a container whose last termination was OOMKilled.
	KindOOM Kind = "oom"
	// KindCrashLoop is a container waiting in CrashLoopBackOff.
	KindCrashLoop Kind = "crashloop"
	// KindWarning is a Warning Event (Ref the object, Message its text).
	KindWarning Kind = "warning"
	// KindDeploy is a deploy (Ref the history record id, Revision the
	// version deployed).
	KindDeploy Kind = "deploy"
	// KindRollback is a rollback (Ref the history record id).
	KindRollback Kind = "rollback"
	// KindOperate is a day-2 action on an object of the App's tree (Ref
	// the audit record id, From and To the value it changed, Message who,
	// what and why).
	KindOperate Kind = "operate"
	// KindFreeze is a freeze starting (To "start") or ending (To "end").
	KindFreeze Kind = "freeze"
	// KindPause is auto-sync paused (To "paused") or resumed (To "resumed").
	KindPause Kind = "pause"
)

// kinds is the closed set, in the order the model lists them.
var kinds = [...]Kind{KindHealth, KindSync, KindDrift, KindRestart, KindOOM, KindCrashLoop,
	KindWarning, KindDeploy, KindRollback, KindOperate, KindFreeze, KindPause}

// Kinds returns every kind of entry.
func Kinds() []Kind { return kinds[:] }

// Valid reports whether k is one of the kinds.
func (k Kind) Valid() bool {
	for _, v := range kinds {
		if k == v {
			return true
		}
	}
	return false
}

// Entry is one thing that happened to an App. Entries are data: Message,
// Ref and Revision hold text from the cluster (an Event's message, a
// container's reason) kept as it came, only cut to their caps and made
// valid UTF-8; whoever renders them escapes them.
type Entry struct {
	Time time.Time `json:"time"`
	App  App       `json:"app"`
	Kind Kind      `json:"kind"`
	// From and To are the states before and after (health codes, sync
	// verdicts, restart counts); empty for a marker (deploy, warning).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Message is the human text (at most MaxMessageBytes).
	Message string `json:"message,omitempty"`
	// Ref points at what the entry is about: a history record id for a
	// deploy or rollback, pod/container for a restart, an object ref for a
	// warning (at most MaxRefBytes).
	Ref string `json:"ref,omitempty"`
	// Revision is the App's version (declared tag) when it happened.
	Revision string `json:"revision,omitempty"`
	// Count is how many times it happened: more than 1 when flaps or
	// repeats inside FlapWindow were folded into this entry, Last being
	// the time of the last one.
	Count int       `json:"count"`
	Last  time.Time `json:"last,omitzero"`
}

// Caps of an entry's text, applied when an entry is recorded and when a
// shard is read (a shard edited by hand is held to them too).
const (
	MaxMessageBytes = 512
	MaxRefBytes     = 256
	MaxStateBytes   = 64 // From, To, Revision
	MaxNameBytes    = 253
)

// normalize caps the entry's text, keeps Count within 1 to MaxCount, and
// keeps times in UTC at millisecond precision (the shard's resolution),
// so an entry read back equals the one recorded.
func (e Entry) normalize() Entry {
	e.Time = e.Time.UTC().Truncate(time.Millisecond)
	if !e.Last.IsZero() {
		e.Last = e.Last.UTC().Truncate(time.Millisecond)
	}
	e.Count = min(max(e.Count, 1), MaxCount)
	e.App.Cluster = capText(e.App.Cluster, MaxNameBytes)
	e.App.Namespace = capText(e.App.Namespace, MaxNameBytes)
	e.App.Name = capText(e.App.Name, MaxNameBytes)
	e.From = capText(e.From, MaxStateBytes)
	e.To = capText(e.To, MaxStateBytes)
	e.Revision = capText(e.Revision, MaxStateBytes)
	e.Ref = capText(e.Ref, MaxRefBytes)
	e.Message = capText(e.Message, MaxMessageBytes)
	return e
}

// capText makes s valid UTF-8 and cuts it to at most n bytes on a rune
// boundary. Nothing else is changed: the text stays data.
func capText(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// LastTime is the time of the last occurrence: Last when entries were
// folded, else Time.
func (e *Entry) LastTime() time.Time {
	if e.Last.After(e.Time) {
		return e.Last
	}
	return e.Time
}
