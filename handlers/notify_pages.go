package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/notify"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// notifyPlace is where a page's subscriptions live: their scope, the
// words that name it, and the URLs of its forms.
type notifyPlace struct {
	scope        notify.Scope
	words        string
	page         string // the page the forms return to
	create       string
	test, delete func(id string) string
}

// appNotifyPlace is App a's place: scope cluster, namespace and App.
func appNotifyPlace(a appRef) notifyPlace {
	c, ns, name := a.Cluster(), a.Namespace, a.Name
	return notifyPlace{scope: notify.Scope{Cluster: c, Namespace: ns, App: name}, words: name,
		page: paths.App(c, ns, name), create: paths.AppNotifications(c, ns, name),
		test:   func(id string) string { return paths.AppNotificationTest(c, ns, name, id) },
		delete: func(id string) string { return paths.AppNotificationDelete(c, ns, name, id) }}
}

// envNotifyPlace is environment env's place: scope environment only (its
// Apps' events carry it).
func envNotifyPlace(env string) notifyPlace {
	return notifyPlace{scope: notify.Scope{Environment: env}, words: "the environment " + env,
		page: paths.Env(env), create: paths.EnvNotifications(env),
		test:   func(id string) string { return paths.EnvNotificationTest(env, id) },
		delete: func(id string) string { return paths.EnvNotificationDelete(env, id) }}
}

// notifyReadTimeout bounds the reads of a page's Notifications section.
const notifyReadTimeout = 5 * time.Second

// notificationsSection is the Notifications section of a page at place:
// its subscriptions (at most maxShown) with their delivery logs, and the
// form when the person may write (roles.Notify at the place).
func (s *Server) notificationsSection(ctx context.Context, place notifyPlace) *templates.NotificationsProps {
	p := &templates.NotificationsProps{Configured: s.opts.Notify != nil, Scope: place.words, CSRF: auth.CSRFToken(ctx),
		CreateURL: place.create, Triggers: notify.TriggerTypes(), Now: s.opts.Now(),
		CanEdit: s.allowed(ctx, roles.Notify, s.scopeTarget(place.scope))}
	if s.opts.Notify == nil {
		return p
	}
	p.Hosts = s.opts.Notify.Hosts()
	// The section is a side of the page: its reads get a short deadline
	// of their own, so an unreachable apiserver does not hold the page.
	ctx, cancel := context.WithTimeout(ctx, notifyReadTimeout)
	defer cancel()
	subs, err := s.opts.Notify.List(ctx)
	if err != nil {
		s.log.Warn("notifications: read subscriptions", "err", err)
		p.Error = "The subscriptions could not be read from the cluster: see the server log."
		return p
	}
	for _, sub := range subscriptionsIn(subs, place.scope) {
		row := templates.SubscriptionRow{ID: sub.ID, Provider: string(sub.Provider), URL: notify.RedactedURL(sub.URL),
			Author: sub.Author, Triggers: sub.Triggers, Created: sub.Created, TestURL: place.test(sub.ID), DeleteURL: place.delete(sub.ID)}
		if sub.SecretRef != nil {
			row.Secret = sub.SecretRef.Name + " / " + sub.SecretRef.Key
		}
		if row.Log, err = s.opts.Notify.DeliveryLog(ctx, sub.ID); err != nil {
			s.log.Warn("notifications: read delivery log", "subscription", sub.ID, "err", err)
			row.LogError = "The delivery log could not be read: see the server log."
		}
		p.Subscriptions = append(p.Subscriptions, row)
	}
	return p
}

// appNotifyCreate adds a subscription of the App from its page's form.
func (s *Server) appNotifyCreate(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	return s.notifyCreate(w, r, appNotifyPlace(a))
}

// envNotifyCreate adds a subscription of an environment from its page.
func (s *Server) envNotifyCreate(w http.ResponseWriter, r *http.Request) error {
	env, err := s.knownEnv(r)
	if err != nil {
		return err
	}
	return s.notifyCreate(w, r, envNotifyPlace(env))
}

func (s *Server) notifyCreate(w http.ResponseWriter, r *http.Request, place notifyPlace) error {
	n, err := s.notifier()
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	sub, err := subscriptionForm(r.PostForm, place.scope, actor(r))
	if err != nil {
		return err
	}
	start := time.Now()
	sub, err = n.Create(r.Context(), sub)
	s.recordSubscription(r, sub, "created", start, err)
	if err := notifyError(err); err != nil {
		return err
	}
	http.Redirect(w, r, place.page+"#notifications", http.StatusSeeOther)
	return nil
}

// appNotifyTest sends the test message of one of the App's subscriptions.
func (s *Server) appNotifyTest(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	return s.notifyTest(w, r, appNotifyPlace(a))
}

// envNotifyTest sends the test message of one of an environment's
// subscriptions.
func (s *Server) envNotifyTest(w http.ResponseWriter, r *http.Request) error {
	env, err := s.knownEnv(r)
	if err != nil {
		return err
	}
	return s.notifyTest(w, r, envNotifyPlace(env))
}

func (s *Server) notifyTest(w http.ResponseWriter, r *http.Request, place notifyPlace) error {
	sub, err := s.placeSubscription(r, place)
	if err != nil {
		return err
	}
	start := time.Now()
	_, err = s.opts.Notify.SendTest(r.Context(), sub.ID)
	s.recordSubscription(r, sub, "tested", start, err)
	if err != nil {
		// The delivery's own failure is in its log entry, shown on the
		// page; only a failure to read or log is an error here.
		return notifyError(err)
	}
	http.Redirect(w, r, place.page+"#notifications", http.StatusSeeOther)
	return nil
}

// appNotifyDelete deletes one of the App's subscriptions.
func (s *Server) appNotifyDelete(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	return s.notifyDelete(w, r, appNotifyPlace(a))
}

// envNotifyDelete deletes one of an environment's subscriptions.
func (s *Server) envNotifyDelete(w http.ResponseWriter, r *http.Request) error {
	env, err := s.knownEnv(r)
	if err != nil {
		return err
	}
	return s.notifyDelete(w, r, envNotifyPlace(env))
}

func (s *Server) notifyDelete(w http.ResponseWriter, r *http.Request, place notifyPlace) error {
	sub, err := s.placeSubscription(r, place)
	if err != nil {
		return err
	}
	start := time.Now()
	err = s.opts.Notify.Delete(r.Context(), sub.ID)
	s.recordSubscription(r, sub, "deleted", start, err)
	if err := notifyError(err); err != nil {
		return err
	}
	http.Redirect(w, r, place.page+"#notifications", http.StatusSeeOther)
	return nil
}

// placeSubscription is the subscription {id} of the request, which must
// be one of place's: a page's buttons act on its own subscriptions only,
// whatever id the URL names (404 otherwise, as for an unknown id).
func (s *Server) placeSubscription(r *http.Request, place notifyPlace) (notify.Subscription, error) {
	n, err := s.notifier()
	if err != nil {
		return notify.Subscription{}, err
	}
	sub, err := n.Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, notify.ErrNotFound) || err == nil && sub.Scope != place.scope {
		return notify.Subscription{}, notFound("subscription")
	}
	return sub, err
}

// knownEnv is the {env} of the request, which must be configured.
func (s *Server) knownEnv(r *http.Request) (string, error) {
	env, err := s.pathEnv(r)
	if err != nil {
		return "", err
	}
	return env.Name, nil
}
