package handlers

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/strictyaml"
	"github.com/hanzoai/deploy-web/notify"
	"github.com/hanzoai/deploy-web/roles"
)

// apiSubscription is a subscription as the API returns it: its URL
// redacted as the pages show it (notify.RedactedURL).
type apiSubscription struct {
	notify.Subscription
	URL string `json:"url"`
}

func toAPI(sub notify.Subscription) apiSubscription {
	return apiSubscription{Subscription: sub, URL: notify.RedactedURL(sub.URL)}
}

// subscriptionsResponse is GET /v1/deploy/notifications/subscriptions.
type subscriptionsResponse struct {
	// Hosts is the delivery allowlist; empty, nothing is sent.
	Hosts         []string          `json:"hosts"`
	Subscriptions []apiSubscription `json:"subscriptions"`
}

// subscriptionResponse is one subscription and its delivery log.
type subscriptionResponse struct {
	Subscription apiSubscription   `json:"subscription"`
	Log          []notify.LogEntry `json:"log"`
}

// subscriptionRequest is the body of a create or an update: every field
// a person sets (the author and creation time are the server's).
type subscriptionRequest struct {
	ID        string               `json:"id"`
	Scope     notify.Scope         `json:"scope"`
	Triggers  []notify.Trigger     `json:"triggers"`
	Provider  envconfig.Provider   `json:"provider"`
	URL       string               `json:"url"`
	SecretRef *envconfig.SecretRef `json:"secretRef"`
}

// readSubscriptionRequest decodes the body strictly (exact keys, one
// object, at most maxBody bytes).
func readSubscriptionRequest(r *http.Request) (subscriptionRequest, error) {
	var req subscriptionRequest
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return req, badRequest("body: unreadable or longer than %d bytes", maxBody)
	}
	if err := strictyaml.UnmarshalJSON(b, &req, strictyaml.Options{}); err != nil {
		return req, badRequest("body: %s", publicOf(err, "not a subscription"))
	}
	return req, nil
}

// scopeFilter reports whether sub matches the query's cluster, namespace,
// app and environment (each exact when given).
func scopeFilter(sub notify.Subscription, q map[string][]string) bool {
	eq := func(key, v string) bool { w := first(q[key]); return w == "" || w == v }
	return eq("cluster", sub.Scope.Cluster) && eq("namespace", sub.Scope.Namespace) && eq("app", sub.Scope.App) && eq("environment", sub.Scope.Environment)
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// apiSubscriptions lists the subscriptions the person may see (View at
// their scope), filtered by the query.
func (s *Server) apiSubscriptions(w http.ResponseWriter, r *http.Request) error {
	n, err := s.notifier()
	if err != nil {
		return err
	}
	subs, err := n.List(r.Context())
	if err != nil {
		return err
	}
	out := subscriptionsResponse{Hosts: n.Hosts(), Subscriptions: []apiSubscription{}}
	if out.Hosts == nil {
		out.Hosts = []string{}
	}
	q := r.URL.Query()
	for _, sub := range subs {
		if scopeFilter(sub, q) && s.allowed(r.Context(), roles.View, s.scopeTarget(sub.Scope)) {
			out.Subscriptions = append(out.Subscriptions, toAPI(sub))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// mayNotify refuses a change of a subscription in sc unless the person
// may notify there (roles.Notify: a deployer in scope, a superadmin).
func (s *Server) mayNotify(r *http.Request, sc notify.Scope) error {
	if d := s.grantsOf(r.Context()).Allow(roles.Notify, s.scopeTarget(sc)); !d.Allowed {
		return &httpError{Status: http.StatusForbidden, Reason: reasonForbidden, Public: d.Because}
	}
	return nil
}

// apiSubscriptionCreate creates a subscription from the JSON body.
func (s *Server) apiSubscriptionCreate(w http.ResponseWriter, r *http.Request) error {
	n, err := s.notifier()
	if err != nil {
		return err
	}
	req, err := readSubscriptionRequest(r)
	if err != nil {
		return err
	}
	if err := s.mayNotify(r, req.Scope); err != nil {
		return err
	}
	start := time.Now()
	sub, err := n.Create(r.Context(), notify.Subscription{ID: req.ID, Scope: req.Scope, Triggers: req.Triggers, Provider: req.Provider,
		URL: strings.TrimSpace(req.URL), SecretRef: req.SecretRef, Author: actor(r)})
	s.recordSubscription(r, sub, "created", start, err)
	if err := notifyError(err); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toAPI(sub))
	return nil
}

// visibleSubscription is subscription {id} if the person may see it (404
// otherwise, as for an unknown id).
func (s *Server) visibleSubscription(r *http.Request) (Notifications, notify.Subscription, error) {
	n, err := s.notifier()
	if err != nil {
		return nil, notify.Subscription{}, err
	}
	sub, err := n.Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, notify.ErrNotFound) || err == nil && !s.allowed(r.Context(), roles.View, s.scopeTarget(sub.Scope)) {
		return nil, notify.Subscription{}, notFound("subscription")
	}
	return n, sub, err
}

// apiSubscription returns one subscription and its delivery log.
func (s *Server) apiSubscription(w http.ResponseWriter, r *http.Request) error {
	n, sub, err := s.visibleSubscription(r)
	if err != nil {
		return err
	}
	log, err := n.DeliveryLog(r.Context(), sub.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, subscriptionResponse{Subscription: toAPI(sub), Log: orEmpty(log)})
	return nil
}

// apiSubscriptionLog returns a subscription's delivery log, newest first.
func (s *Server) apiSubscriptionLog(w http.ResponseWriter, r *http.Request) error {
	n, sub, err := s.visibleSubscription(r)
	if err != nil {
		return err
	}
	log, err := n.DeliveryLog(r.Context(), sub.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Log []notify.LogEntry `json:"log"`
	}{orEmpty(log)})
	return nil
}

func orEmpty(log []notify.LogEntry) []notify.LogEntry {
	if log == nil {
		return []notify.LogEntry{}
	}
	return log
}

// apiSubscriptionUpdate replaces a subscription (its author and creation
// time kept); the person must be allowed at its old scope and its new.
func (s *Server) apiSubscriptionUpdate(w http.ResponseWriter, r *http.Request) error {
	n, old, err := s.visibleSubscription(r)
	if err != nil {
		return err
	}
	req, err := readSubscriptionRequest(r)
	if err != nil {
		return err
	}
	if req.ID != "" && req.ID != old.ID {
		return badRequest("body: id %q is not the URL's %q: an id cannot change", req.ID, old.ID)
	}
	for _, sc := range []notify.Scope{old.Scope, req.Scope} {
		if err := s.mayNotify(r, sc); err != nil {
			return err
		}
	}
	sub := notify.Subscription{ID: old.ID, Scope: req.Scope, Triggers: req.Triggers, Provider: req.Provider,
		URL: strings.TrimSpace(req.URL), SecretRef: req.SecretRef}
	start := time.Now()
	err = n.Update(r.Context(), sub)
	sub.Author, sub.Created = old.Author, old.Created
	s.recordSubscription(r, sub, "changed", start, err)
	if err := notifyError(err); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAPI(sub))
	return nil
}

// apiSubscriptionDelete deletes a subscription and its delivery log.
func (s *Server) apiSubscriptionDelete(w http.ResponseWriter, r *http.Request) error {
	n, sub, err := s.visibleSubscription(r)
	if err != nil {
		return err
	}
	if err := s.mayNotify(r, sub.Scope); err != nil {
		return err
	}
	start := time.Now()
	err = n.Delete(r.Context(), sub.ID)
	s.recordSubscription(r, sub, "deleted", start, err)
	if err := notifyError(err); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// apiSubscriptionTest sends the subscription's test message now and
// returns its delivery (status, latency, error) as the log keeps it.
func (s *Server) apiSubscriptionTest(w http.ResponseWriter, r *http.Request) error {
	n, sub, err := s.visibleSubscription(r)
	if err != nil {
		return err
	}
	if err := s.mayNotify(r, sub.Scope); err != nil {
		return err
	}
	start := time.Now()
	entry, err := n.SendTest(r.Context(), sub.ID)
	s.recordSubscription(r, sub, "tested", start, err)
	if err := notifyError(err); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, entry)
	return nil
}
