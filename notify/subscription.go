package notify

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hanzoai/deploy-web/envconfig"
)

// TriggerType names what happened to an App.
type TriggerType string

// The triggers a subscription can ask for.
const (
	TriggerDegraded           TriggerType = "degraded"
	TriggerRecovered          TriggerType = "recovered"
	TriggerApplyFailed        TriggerType = "apply-failed"
	TriggerAutoSyncFailed     TriggerType = "auto-sync-failed"
	TriggerDrift              TriggerType = "drift"
	TriggerFreezeStart        TriggerType = "freeze-start"
	TriggerFreezeEnd          TriggerType = "freeze-end"
	TriggerPromotionRequested TriggerType = "promotion-requested"
	// TriggerOperated is a day-2 action someone took on an object of
	// the App (restart, scale, suspend, resume, delete a pod).
	TriggerOperated TriggerType = "operated"
	// TriggerTest is the "send test" message; no subscription lists it.
	TriggerTest TriggerType = "test"
	// triggerSettled is an App leaving Degraded for another state than
	// Healthy: never sent, it drops the degraded messages held for the
	// App (Debouncer.Settled).
	triggerSettled TriggerType = "settled"
)

// triggerTypes are the types a subscription may list, in display order.
var triggerTypes = []TriggerType{TriggerDegraded, TriggerRecovered, TriggerApplyFailed, TriggerAutoSyncFailed,
	TriggerDrift, TriggerFreezeStart, TriggerFreezeEnd, TriggerPromotionRequested, TriggerOperated}

// TriggerTypes returns the triggers a subscription may list, in display
// order (for a form's choices).
func TriggerTypes() []TriggerType { return slices.Clone(triggerTypes) }

// Trigger is one thing a subscription asks to be told about. For is only
// for degraded: the App must still be degraded For seconds after it became
// so (0: at once).
type Trigger struct {
	Type TriggerType `json:"type"`
	For  int         `json:"for,omitempty"`
}

// Scope selects the Apps a subscription is about; an empty field matches
// any value.
type Scope struct {
	Cluster     string `json:"cluster,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	App         string `json:"app,omitempty"`
	Environment string `json:"environment,omitempty"`
}

// Matches reports whether ev is inside s.
func (s Scope) Matches(ev Event) bool {
	eq := func(want, got string) bool { return want == "" || want == got }
	return eq(s.Cluster, ev.Cluster) && eq(s.Namespace, ev.Namespace) && eq(s.App, ev.App) && eq(s.Environment, ev.Environment)
}

// Subscription says who is told what, where and how.
type Subscription struct {
	ID        string               `json:"id"`
	Scope     Scope                `json:"scope"`
	Triggers  []Trigger            `json:"triggers"`
	Provider  envconfig.Provider   `json:"provider"`
	URL       string               `json:"url"`
	SecretRef *envconfig.SecretRef `json:"secretRef,omitempty"`
	Author    string               `json:"author"`
	Created   time.Time            `json:"created"`
}

// Describe is triggers in words, as pages and records show them:
// "degraded for 30s, recovered".
func Describe(triggers []Trigger) string {
	out := make([]string, len(triggers))
	for i, t := range triggers {
		out[i] = string(t.Type)
		if t.For > 0 {
			out[i] += " for " + strconv.Itoa(t.For) + "s"
		}
	}
	return strings.Join(out, ", ")
}

// Wants returns the subscription's trigger of type t, if it lists it.
func (s *Subscription) Wants(t TriggerType) (Trigger, bool) {
	for _, tr := range s.Triggers {
		if tr.Type == t {
			return tr, true
		}
	}
	return Trigger{}, false
}

// Limits of one subscription.
const (
	MaxAuthorLength = 256
	// MaxDegradedFor is the longest debounce of degraded: a day.
	MaxDegradedFor = 86400
)

// FieldError is a mistake in a subscription; Field is a path such as
// "triggers[1].for".
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("notify: subscription: %s: %s", e.Field, e.Message)
}

// Validate checks s strictly against hosts (the delivery allowlist) and
// returns every mistake, each a *FieldError naming its field.
func (s *Subscription) Validate(hosts []string) error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Message: fmt.Sprintf(format, a...)})
	}
	if !validID(s.ID) {
		bad("id", "%q is not an id: 1 to 63 lower-case letters, digits and '-', starting with a letter or digit", s.ID)
	}
	for _, f := range []struct{ field, v string }{{"scope.cluster", s.Scope.Cluster}, {"scope.namespace", s.Scope.Namespace}, {"scope.app", s.Scope.App}, {"scope.environment", s.Scope.Environment}} {
		if f.v != "" && len(validation.IsDNS1123Subdomain(f.v)) > 0 {
			bad(f.field, "%q is not a Kubernetes name (lower-case letters, digits, '-' and '.'); leave it empty to match any", f.v)
		}
	}
	if len(s.Triggers) == 0 {
		bad("triggers", "empty: list at least one of %s", triggerList())
	}
	seen := map[TriggerType]bool{}
	for i, tr := range s.Triggers {
		field := fmt.Sprintf("triggers[%d]", i)
		if !knownTrigger(tr.Type) {
			bad(field+".type", "%q is not a trigger: one of %s", tr.Type, triggerList())
			continue
		}
		if seen[tr.Type] {
			bad(field+".type", "%q is listed twice", tr.Type)
		}
		seen[tr.Type] = true
		switch {
		case tr.Type != TriggerDegraded && tr.For != 0:
			bad(field+".for", "only degraded takes a duration")
		case tr.For < 0 || tr.For > MaxDegradedFor:
			bad(field+".for", "%d is out of range: 0 to %d seconds", tr.For, MaxDegradedFor)
		}
	}
	if !envconfig.KnownProvider(s.Provider) {
		bad("provider", "%q is not a provider: webhook, slack or teams", s.Provider)
	}
	if err := envconfig.CheckNotificationURL(s.URL, hosts); err != nil {
		bad("url", "%v", err)
	}
	if s.SecretRef != nil {
		if len(validation.IsDNS1123Subdomain(s.SecretRef.Name)) > 0 {
			bad("secretRef.name", "%q is not a Secret name", s.SecretRef.Name)
		}
		if len(validation.IsConfigMapKey(s.SecretRef.Key)) > 0 {
			bad("secretRef.key", "%q is not a Secret key (letters, digits, '-', '_' and '.')", s.SecretRef.Key)
		}
	} else if s.Provider == envconfig.ProviderWebhook {
		bad("secretRef", "a webhook needs the Secret key that holds its HMAC key")
	}
	if s.Author == "" || len(s.Author) > MaxAuthorLength {
		bad("author", "must be 1 to %d bytes", MaxAuthorLength)
	}
	if s.Created.IsZero() {
		bad("created", "missing")
	}
	return errors.Join(errs...)
}

func validID(id string) bool {
	return len(id) <= 63 && len(validation.IsDNS1123Label(id)) == 0
}

func knownTrigger(t TriggerType) bool {
	for _, k := range triggerTypes {
		if k == t {
			return true
		}
	}
	return false
}

func triggerList() string {
	s := make([]string, len(triggerTypes))
	for i, t := range triggerTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// decodeSubscriptions reads the store's JSON strictly.
func decodeSubscriptions(b []byte) ([]Subscription, error) {
	var subs []Subscription
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&subs); err != nil {
		return nil, err
	}
	return subs, nil
}
