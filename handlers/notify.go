package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/notify"
	"github.com/hanzoai/deploy-web/roles"
)

// Notifications is the notification seam: the subscriptions and their
// delivery logs (notify.Store) and the "send test" of this replica
// (notify.Sender), joined by the command line.
type Notifications interface {
	// Hosts is the delivery allowlist (notifications.hosts).
	Hosts() []string
	List(ctx context.Context) ([]notify.Subscription, error)
	Get(ctx context.Context, id string) (notify.Subscription, error)
	Create(ctx context.Context, sub notify.Subscription) (notify.Subscription, error)
	Update(ctx context.Context, sub notify.Subscription) error
	Delete(ctx context.Context, id string) error
	DeliveryLog(ctx context.Context, id string) ([]notify.LogEntry, error)
	SendTest(ctx context.Context, id string) (notify.LogEntry, error)
}

// EnvironmentOf is the environment an App in cluster and namespace
// belongs to ("" for none or several): the rule roles apply (appEnv), for
// the notifications of an environment's Apps.
func (s *Server) EnvironmentOf(cluster, namespace string) string { return s.appEnv(cluster, namespace) }

// notifier returns the seam, or a 503 when notifications are not
// configured.
func (s *Server) notifier() (Notifications, error) {
	if s.opts.Notify == nil {
		return nil, &httpError{Status: http.StatusServiceUnavailable, Reason: "NotConfigured",
			Public: "notifications are not configured: deploy-web needs its own namespace (--history-namespace or $POD_NAMESPACE)"}
	}
	return s.opts.Notify, nil
}

// SubscriptionTarget is scopeTarget, for the notifications' check of the
// Secret keys subscriptions name (notify.Store.WithKeys).
func (s *Server) SubscriptionTarget(sc notify.Scope) roles.Target { return s.scopeTarget(sc) }

// scopeTarget is where a subscription's changes happen, for roles: an App
// (in its environment), or an environment (its cluster and namespace); a
// wider scope is fleet-wide, which only an unscoped role covers.
func (s *Server) scopeTarget(sc notify.Scope) roles.Target {
	if sc.App != "" {
		return roles.Target{Cluster: sc.Cluster, Environment: s.appEnv(sc.Cluster, sc.Namespace), Namespace: sc.Namespace, App: sc.App}
	}
	if sc.Environment != "" {
		return s.envTarget(sc.Environment)
	}
	return roles.Target{Cluster: sc.Cluster, Namespace: sc.Namespace}
}

// subscriptionsIn returns the subscriptions whose scope is exactly sc (an
// App's or an environment's), at most maxShown.
func subscriptionsIn(subs []notify.Subscription, sc notify.Scope) []notify.Subscription {
	var out []notify.Subscription
	for _, sub := range subs {
		if sub.Scope == sc && len(out) < maxShown {
			out = append(out, sub)
		}
	}
	return out
}

// maxShown bounds the subscriptions a page shows with their logs (a
// delivery log is one read each).
const maxShown = 20

// subscriptionForm is the subscription a page's form asks for, in scope
// sc, by author, before validation (the store validates every field):
// the checked triggers, degraded's "for" in seconds, the provider, the
// URL and the Secret key holding the credentials.
func subscriptionForm(form url.Values, sc notify.Scope, author string) (notify.Subscription, error) {
	sub := notify.Subscription{Scope: sc, Provider: envconfig.Provider(form.Get("provider")), URL: strings.TrimSpace(form.Get("url")), Author: author}
	for _, t := range form["trigger"] {
		sub.Triggers = append(sub.Triggers, notify.Trigger{Type: notify.TriggerType(t)})
	}
	if v := strings.TrimSpace(form.Get("degraded_for")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return sub, badRequest("degraded for %q: a number of seconds", v)
		}
		i := slices.IndexFunc(sub.Triggers, func(t notify.Trigger) bool { return t.Type == notify.TriggerDegraded })
		if i < 0 && n != 0 {
			return sub, badRequest("degraded for %d seconds: check degraded too, or leave it empty", n)
		}
		if i >= 0 {
			sub.Triggers[i].For = n
		}
	}
	if name := strings.TrimSpace(form.Get("secret_name")); name != "" || form.Get("secret_key") != "" {
		sub.SecretRef = &envconfig.SecretRef{Name: name, Key: strings.TrimSpace(form.Get("secret_key"))}
	}
	return sub, nil
}

// notifyError maps the store's refusals: a subscription's field errors
// (their text names the field and the allowlist, never a Secret's value)
// are a 400, a Secret key it may not name a 403 (outside the key's scope,
// or not declared) or a 422 (another provider or URL than the key's
// declaration), an unknown id a 404; anything else a 500.
func notifyError(err error) error {
	var fe *notify.FieldError
	var ke *notify.KeyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ke) && ke.Forbidden:
		return &httpError{Status: http.StatusForbidden, Reason: reasonForbidden, Public: "subscription refused: " + ke.Message, Err: err}
	case errors.As(err, &ke):
		return &httpError{Status: http.StatusUnprocessableEntity, Reason: "KeyMismatch", Public: "subscription refused: " + ke.Message, Err: err}
	case errors.As(err, &fe):
		var msgs []string
		for _, e := range unjoin(err) {
			if errors.As(e, &fe) {
				msgs = append(msgs, fe.Field+": "+fe.Message)
			}
		}
		return &httpError{Status: http.StatusBadRequest, Reason: "Invalid", Public: "subscription refused: " + strings.Join(msgs, "; "), Err: err}
	case errors.Is(err, notify.ErrNotFound):
		return notFound("subscription")
	case errors.Is(err, notify.ErrFull):
		return &httpError{Status: http.StatusConflict, Reason: "Full", Public: publicOf(err, "no room for another subscription"), Err: err}
	}
	return err
}

// unjoin lists the errors errors.Join joined (err alone otherwise).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// recordSubscription writes the audit record of a subscription change
// (created, deleted, changed, tested) in its scope's stream.
func (s *Server) recordSubscription(r *http.Request, sub notify.Subscription, what string, start time.Time, err error) {
	rec := audit.Record{Time: start, Duration: audit.Duration(time.Since(start)), Actor: auditActor(r.Context()), Verb: audit.VerbSubscription,
		Cluster: sub.Scope.Cluster, Environment: sub.Scope.Environment, Namespace: sub.Scope.Namespace, App: sub.Scope.App,
		Outcome: audit.OutcomeSucceeded, Message: "subscription " + sub.ID + " " + what + ": " + subscriptionSummary(sub), Blockers: []string{}}
	if rec.Cluster == "" && len(s.clusters) == 1 {
		rec.Cluster = s.clusters[0].Name
	}
	if err != nil {
		rec.Outcome, rec.Message = audit.OutcomeFailed, "subscription "+sub.ID+" not "+what+": see the server log"
		var he *httpError
		if errors.As(notifyError(err), &he) && he.Status < 500 {
			rec.Outcome, rec.Message = audit.OutcomeRefused, he.Public
		}
	}
	appendRecord(r.Context(), s.opts.Audit, rec)
}

// subscriptionSummary is a subscription in one line for records: its
// triggers, provider and redacted URL (never a Secret's value).
func subscriptionSummary(sub notify.Subscription) string {
	return notify.Describe(sub.Triggers) + " to " + string(sub.Provider) + " " + notify.RedactedURL(sub.URL)
}
