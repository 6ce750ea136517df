package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/hanzoai/deploy-web/envconfig"
	"time"
)

// Event is one thing that happened to an App, as the caller saw it. App,
// Cluster, Namespace, Environment, Revision, From, To and Message come
// from the cluster or git and are hostile: each provider escapes them for
// its markup. Link is the console's page for the event (built by the
// console, not from data).
type Event struct {
	Trigger     TriggerType `json:"trigger"`
	App         string      `json:"app"`
	Cluster     string      `json:"cluster,omitempty"`
	Namespace   string      `json:"namespace,omitempty"`
	Environment string      `json:"environment,omitempty"`
	Revision    string      `json:"revision,omitempty"`
	From        string      `json:"from,omitempty"`
	To          string      `json:"to,omitempty"`
	Message     string      `json:"message,omitempty"`
	Link        string      `json:"link,omitempty"`
	Time        time.Time   `json:"time"`
}

// appKey names an App across the fleet.
type appKey struct{ cluster, namespace, app string }

func (e Event) appKey() appKey { return appKey{e.Cluster, e.Namespace, e.App} }

// dedupKey is what "one message per subscription, App, trigger and
// revision" compares: a hash, so that the persisted keys are small and
// carry no names.
func dedupKey(subID string, e Event) string {
	h := sha256.New()
	for _, s := range []string{subID, e.Cluster, e.Namespace, e.App, string(e.Trigger), e.Revision} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Limits of an event's text: longer values are cut (and marked) before
// any provider sees them.
const (
	maxNameLength    = 253
	maxMessageLength = 2000
)

// bounded returns e with every field cut to its limit.
func (e Event) bounded() Event {
	cut := func(s string, n int) string {
		if len(s) <= n {
			return s
		}
		// Cut on a rune boundary.
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		return s[:n] + "…"
	}
	e.App, e.Cluster, e.Namespace, e.Environment = cut(e.App, maxNameLength), cut(e.Cluster, maxNameLength), cut(e.Namespace, maxNameLength), cut(e.Environment, maxNameLength)
	e.Revision, e.From, e.To = cut(e.Revision, maxNameLength), cut(e.From, maxNameLength), cut(e.To, maxNameLength)
	e.Message, e.Link = cut(e.Message, maxMessageLength), cut(e.Link, envconfig.MaxURLLength)
	return e
}
