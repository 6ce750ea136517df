package main

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"sync/atomic"

	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/notify"
	"github.com/hanzoai/deploy-web/notify/auditfeed"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
)

// notifications is the console's notification seam (handlers.Notifications):
// the subscriptions store and the sender of this replica.
type notifications struct {
	*notify.Store
	*notify.Sender
	// feed is the timeline feed once start runs it: the Apps degraded
	// now, which the sender is handed again as it takes the Lease.
	feed atomic.Pointer[notify.TimelineFeed]
	// targetOf is the console's target of a subscription's scope
	// (handlers.Server.SubscriptionTarget), once start has it: the store
	// checks the Secret keys subscriptions name at that target.
	targetOf atomic.Pointer[func(notify.Scope) scope.Target]
}

// target is the roles target of a subscription's scope sc: the
// console's rule once start runs, the scope's own fields before (no
// request is served and nothing is sent before start).
func (n *notifications) target(sc notify.Scope) scope.Target {
	if f := n.targetOf.Load(); f != nil {
		return (*f)(sc)
	}
	return scope.Target{Cluster: sc.Cluster, Environment: sc.Environment, Namespace: sc.Namespace, App: sc.App}
}

// serveNotifications builds serve's notifications in deploy-web's own
// namespace (that of the audit trail); without one, none (logged), and the
// pages say notifications are not configured.
func serveNotifications(cfg serveConfig, cs kubernetes.Interface, hosts []string, keys []envconfig.NotificationKey, log *slog.Logger) (*notifications, error) {
	ns, err := historyNamespace(cfg.HistoryNamespace, os.Getenv, os.ReadFile)
	if err != nil {
		log.Warn("no notifications: deploy-web has no namespace of its own", "err", err)
		return nil, nil
	}
	if len(hosts) == 0 {
		log.Warn("notifications: notifications.hosts is empty (environments file): nothing is sent")
	}
	return newNotifications(cs, ns, replicaIdentity(os.Getenv, os.Hostname, os.Getpid()), hosts, keys, log)
}

// newNotifications builds the subscriptions store and the sender in
// deploy-web's own namespace ns of the home cluster, delivering only to
// hosts (notifications.hosts of the environments file; none: nothing is
// sent, and the pages say so), with only the Secret keys of keys
// (notifications.keys). The sender contends for its Lease once start runs
// it.
func newNotifications(cs kubernetes.Interface, ns, identity string, hosts []string, keys []envconfig.NotificationKey, log *slog.Logger) (*notifications, error) {
	n := &notifications{}
	n.Store = notify.NewStore(cs, ns, hosts).WithKeys(keys, n.target)
	sender, err := notify.NewSender(cs, n.Store, notify.Options{Namespace: ns, Hosts: hosts, Identity: identity,
		OnLead: n.replay, Log: log.With("component", "notify")})
	if err != nil {
		return nil, err
	}
	n.Sender = sender
	return n, nil
}

// replay hands the sender, as this replica takes the Lease, the Apps
// degraded now (notify.TimelineFeed.Replay): a degradation that began
// while no replica led is announced, one the previous leader delivered is
// not (its delivery logs' keys).
func (n *notifications) replay(context.Context) {
	if f := n.feed.Load(); f != nil {
		f.Replay(n.Sender.Notify)
	}
}

// notifyFeeds are where events come from: the timeline's transitions
// (degraded, recovered, drift) and the audit records' feed (failed
// applies and auto-syncs, promotion requests, freezes). Either may be nil.
type notifyFeeds struct {
	timeline *timeline.Store
	records  *recordfeed.Feed
	// environmentOf names an App's environment (handlers.Server's rule).
	environmentOf func(cluster, namespace string) string
	// target is the target of a subscription's scope (handlers.Server's
	// SubscriptionTarget), for the check of the Secret keys it names.
	target func(notify.Scope) scope.Target
	// cluster names the cluster of timeline entries without one.
	cluster string
	// base is the console's origin for links in messages ("": none).
	base string
}

// start runs the sender (a Lease holder, in held) and the feeds until
// ctx ends.
func (n *notifications) start(ctx context.Context, held *leaseHolders, f notifyFeeds, log *slog.Logger) {
	if f.target != nil {
		n.targetOf.Store(&f.target)
	}
	held.Go(func() {
		if err := n.Sender.Run(ctx); err != nil {
			log.Error("notifications stopped", "err", err)
		}
	})
	if f.records != nil {
		f.records.Subscribe(auditfeed.Subscription(n.Sender.Leading, func(ev notify.Event) string { return eventLink(f.base, ev) }, n.Sender.Notify))
	}
	if f.timeline == nil {
		log.Warn("notifications: no timeline: degraded, recovered and drift are not sent")
		return
	}
	sub, err := f.timeline.Subscribe(timeline.MaxSubscriptionBuffer)
	if err != nil {
		log.Error("notifications: no timeline subscription: degraded, recovered and drift are not sent", "err", err)
		return
	}
	feed := &notify.TimelineFeed{Cluster: f.cluster, EnvironmentOf: f.environmentOf,
		Link: func(cluster, ns, app string) string {
			return eventLink(f.base, notify.Event{Cluster: cluster, Namespace: ns, App: app})
		}}
	n.feed.Store(feed)
	go func() {
		defer sub.Close()
		feed.Run(ctx, sub.C(), n.Sender.Notify)
	}()
}

// consoleBase is the console's origin (scheme and host) from its OIDC
// redirect URL, for links in messages; "" when it has none.
func consoleBase(redirectURL string) string {
	u, err := url.Parse(redirectURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// eventLink is the console's page of an event: its App's, else its
// environment's, else none.
func eventLink(base string, ev notify.Event) string {
	switch {
	case base == "":
		return ""
	case ev.App != "" && ev.Namespace != "" && ev.Cluster != "":
		return base + paths.App(ev.Cluster, ev.Namespace, ev.App)
	case ev.Environment != "":
		return base + paths.Env(ev.Environment)
	}
	return ""
}
