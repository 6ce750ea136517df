package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/internal/lease"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/timeline/clusterfeed"
	"github.com/hanzoai/deploy-web/timeline/recordentries"
)

// The timeline's Lease timings: a holder that stops cleanly hands over at
// once; a crashed one within timelineLeaseDuration (its unwritten entries
// are written by the next holder, which observed them too).
const (
	timelineLeaseDuration = 15 * time.Second
	timelineRenewDeadline = 10 * time.Second
	timelineRetryPeriod   = 2 * time.Second
	// timelineHandoverTimeout bounds the writes of a clean stop
	// (timeline.Store.Handover), inside the stop's grace.
	timelineHandoverTimeout = 5 * time.Second
)

// startTimeline builds the timeline store in namespace ns of the home
// cluster (cs), loads and runs it on ctx, contends for its Lease
// (timeline.LeaseName) with identity in held until leaseCtx ends, and feeds it on this replica from
// every member's caches and Warning Events and from the audit records
// (a subscriber of records, the one feed of them; nil: no deploy markers). Every replica feeds and reads; only
// the Lease holder writes. The store is returned for its readers: the
// handlers (Query, Fleet, Subscribe) and any other consumer of its live
// entries (Subscribe).
func startTimeline(ctx, leaseCtx context.Context, held *leaseHolders, cs kubernetes.Interface, ns, identity string, members []*member, records *recordfeed.Feed, log *slog.Logger) (*timeline.Store, error) {
	log = log.With("component", "timeline")
	var leading atomic.Bool
	store, err := timeline.New(cs.CoreV1(), timeline.Options{Namespace: ns, IsLeader: leading.Load, Log: log})
	if err != nil {
		return nil, err
	}
	go func() {
		if err := store.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("timeline not loaded: the timeline pages wait for it", "namespace", ns, "err", err)
		}
	}()
	held.Go(func() {
		err := lease.Run(leaseCtx, cs.CoordinationV1(), lease.Config{Namespace: ns, Name: timeline.LeaseName, Identity: identity,
			LeaseDuration: timelineLeaseDuration, RenewDeadline: timelineRenewDeadline, RetryPeriod: timelineRetryPeriod},
			func(term context.Context) {
				leading.Store(true)
				defer leading.Store(false)
				log.Info("timeline: this replica writes the timeline", "identity", identity)
				<-term.Done()
				if leaseCtx.Err() == nil {
					return // the Lease was lost: another replica may write now
				}
				// A clean stop: what waits is written before the Lease is
				// released (the next holder did not see it happen).
				hctx, cancel := context.WithTimeout(context.WithoutCancel(leaseCtx), timelineHandoverTimeout)
				defer cancel()
				if n := store.Handover(hctx); n > 0 {
					log.Error("timeline: stopped with shards unwritten; the next holder writes what it observed", "shards", n)
				}
			})
		if err != nil {
			log.Error("timeline: no Lease: this replica never writes the timeline", "err", err)
		}
	})
	for _, m := range members {
		go clusterfeed.Apps(ctx, m.cfg.Name, m.view, store, clusterfeed.Pace)
		if err := clusterfeed.Warnings(ctx, m.cfg.Name, m.cs, m.cfg.Namespaces, m.view.AppOf, store, log); err != nil {
			return nil, err
		}
	}
	if records != nil {
		records.Subscribe(recordentries.NewRecordEntries(appResourceOf(members)).Subscription(store))
	}
	log.Info("timeline", "namespace", ns, "lease", timeline.LeaseName, "identity", identity)
	return store, nil
}

// appResourceOf says whether group/kind is the App resource of a
// member cluster (its configured group; its kind as discovery found it).
func appResourceOf(members []*member) func(cluster, group, kind string) bool {
	type gk struct{ group, kind string }
	by := map[string]gk{}
	for _, m := range members {
		by[m.cfg.Name] = gk{m.cfg.GVR().Group, m.appKind}
	}
	return func(cluster, group, kind string) bool {
		g, ok := by[cluster]
		return ok && g.group == group && (g.kind == "" || g.kind == kind)
	}
}
