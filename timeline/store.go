package timeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/hanzoai/deploy-web/internal/labels"
)

// Options configure a Store.
type Options struct {
	// Namespace holds the shard ConfigMaps (deploy-web's own namespace).
	Namespace string
	// Shards is the number of shard ConfigMaps (default DefaultShards, at
	// most MaxShards). Keep it fixed for an installation: an App's shard
	// is its hash modulo Shards.
	Shards int
	// Limits bound each App's entries.
	Limits Limits
	// FlushInterval is the writer's period (default and minimum 1s): one
	// shard at most is written per period, fleet-wide, and two writes are
	// never closer than FlushInterval.
	FlushInterval time.Duration
	// IsLeader says whether this replica writes (for example a
	// leaderelection.LeaderElector's IsLeader). Nil: it never writes and
	// only reads what the leader writes.
	IsLeader func() bool
	// MaxApps bounds the Apps held (default 50,000); entries of further
	// Apps are dropped and counted.
	MaxApps int
	// Standby bounds the entries a replica that does not lead keeps, so
	// that the entries of a leader handover are written by the new leader
	// (default 10,000; they are kept for StandbyAge, default 2 minutes).
	Standby    int
	StandbyAge time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives write errors and unreadable shards (default: discard).
	Log *slog.Logger
}

// Defaults of Options.
const (
	DefaultFlushInterval = time.Second
	DefaultMaxApps       = 50_000
	DefaultStandby       = 10_000
	DefaultStandbyAge    = 2 * time.Minute
	// MaxSubscribers bounds the live subscribers of a Store.
	MaxSubscribers = 1024
)

// Stats are the store's counters, for metrics and tests.
type Stats struct {
	// Writes are shard writes attempted (create or update), WriteErrors
	// those that failed, Conflicts those that lost to another writer.
	Writes, WriteErrors, Conflicts uint64
	// Dropped are entries dropped to fit a full shard, Refused entries of
	// an unknown kind, without an App or past MaxApps, Skipped entries of
	// an unknown kind read from a shard, ShardErrors unreadable shards,
	// StandbyDropped entries a replica that does not lead could not keep
	// aside (past Options.Standby).
	Dropped, Refused, Skipped, ShardErrors, StandbyDropped uint64
	// IdleTicks counts the writer's ticks, as the leader, that found
	// nothing to write (no shard pending, no fold due): the writer at rest
	// (tests wait for it rather than for a span of time).
	IdleTicks uint64
	// Apps and Entries are what the index holds; Pending the shards
	// waiting for a write; Folded the Apps whose folded repeats wait to
	// be written (Limits.FoldWrite).
	Apps, Entries, Pending, Folded int
}

// Store keeps the timeline: an in-memory index of every App's entries,
// loaded from the shard ConfigMaps at start, kept current by Record (on
// the leader) and by a watch of the shards (on every replica), and written
// back by the leader one shard per FlushInterval. Its methods are safe for
// concurrent use.
type Store struct {
	cms  typedcorev1.ConfigMapsGetter
	opts Options
	lim  Limits

	mu     sync.RWMutex
	logs   map[App]*appLog
	shards []map[App]*appLog // the logs of each shard
	states map[App]State     // the last state Observe saw, per App
	// observed is when Observe first saw each App of states (since this
	// start, or since its last Forget): Coverage.
	observed map[App]time.Time
	dirty    map[int]time.Time // shard -> when its oldest unwritten change was made
	folds    map[App]foldMark  // Apps whose folds are not written yet (leader)
	rv       []string          // the last resourceVersion seen of each shard
	exists   []bool            // whether each shard's ConfigMap exists
	standby  []Entry
	leading  bool
	// lastWrite is when the last write was sent: the next one waits
	// until FlushInterval has passed since.
	lastWrite time.Time
	stats     Stats

	subs subscribers

	ready chan struct{}
}

// New returns a Store of the shards in opts.Namespace. Call Run to load
// the shards and keep them.
func New(cms typedcorev1.ConfigMapsGetter, opts Options) (*Store, error) {
	if opts.Namespace == "" {
		return nil, errors.New("timeline: Options.Namespace is empty: name the namespace that holds the timeline ConfigMaps")
	}
	if opts.Shards == 0 {
		opts.Shards = DefaultShards
	}
	if opts.Shards < 1 || opts.Shards > MaxShards {
		return nil, fmt.Errorf("timeline: Options.Shards is %d: use 1 to %d", opts.Shards, MaxShards)
	}
	opts.FlushInterval = max(opts.FlushInterval, DefaultFlushInterval)
	if opts.MaxApps <= 0 {
		opts.MaxApps = DefaultMaxApps
	}
	if opts.Standby <= 0 {
		opts.Standby = DefaultStandby
	}
	if opts.StandbyAge <= 0 {
		opts.StandbyAge = DefaultStandbyAge
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	s := &Store{cms: cms, opts: opts, lim: opts.Limits.withDefaults(),
		logs: map[App]*appLog{}, shards: make([]map[App]*appLog, opts.Shards), states: map[App]State{}, observed: map[App]time.Time{},
		dirty: map[int]time.Time{}, folds: map[App]foldMark{}, rv: make([]string, opts.Shards), exists: make([]bool, opts.Shards), ready: make(chan struct{})}
	for i := range s.shards {
		s.shards[i] = map[App]*appLog{}
	}
	s.subs.init()
	return s, nil
}

// Ready is closed once Run has loaded the shards.
func (s *Store) Ready() <-chan struct{} { return s.ready }

// Run loads the shards, then keeps the index current from a watch of the
// shard ConfigMaps and, while IsLeader says so, writes changed shards, one
// per FlushInterval. It returns when ctx ends (nil) or when the first load
// fails.
func (s *Store) Run(ctx context.Context) error {
	if err := s.load(ctx); err != nil {
		return err
	}
	close(s.ready)
	inf := cache.NewSharedIndexInformer(s.listWatch(), &corev1.ConfigMap{}, 0, cache.Indexers{})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.observeShard(obj) },
		UpdateFunc: func(_, obj any) { s.observeShard(obj) },
	}); err != nil {
		return fmt.Errorf("timeline: watch shards: %w", err)
	}
	go inf.RunWithContext(ctx)
	// Ticks are a tenth of the interval, so that a write follows the
	// previous one by FlushInterval to FlushInterval*11/10, never less:
	// under churn the writer keeps close to one write per interval.
	t := time.NewTicker(s.opts.FlushInterval / 10)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.flush(ctx)
		}
	}
}

func (s *Store) selector() string { return labels.Kind + "=" + KindValue }

func (s *Store) listWatch() *cache.ListWatch {
	cms := s.cms.ConfigMaps(s.opts.Namespace)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = s.selector()
			return cms.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = s.selector()
			return cms.Watch(ctx, o)
		},
	}
}

// load reads every shard into the index.
func (s *Store) load(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	list, err := s.cms.ConfigMaps(s.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: s.selector()})
	if err != nil {
		return fmt.Errorf("timeline: list the timeline ConfigMaps in namespace %s: %w", s.opts.Namespace, err)
	}
	for i := range list.Items {
		s.observeShard(&list.Items[i])
	}
	return nil
}

// shardIndex returns the shard a ConfigMap name holds, or false.
func (s *Store) shardIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, ShardPrefix)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || i >= s.opts.Shards || ShardName(i) != name {
		return 0, false
	}
	return i, true
}

// observeShard takes a shard ConfigMap read from the cluster into the
// index. A replica that does not lead replaces the shard's Apps with what
// the leader wrote (folds and drops included); the leader merges it (the
// union), so entries recorded since its last write stay and another
// writer's entries are kept.
func (s *Store) observeShard(obj any) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	i, ok := s.shardIndex(cm.Name)
	if !ok {
		s.opts.Log.Warn("timeline: ignoring a ConfigMap that is not a shard of this store", "configmap", cm.Namespace+"/"+cm.Name)
		return
	}
	s.mu.RLock()
	held := s.exists[i] && cm.ResourceVersion != "" && cm.ResourceVersion == s.rv[i]
	s.mu.RUnlock()
	if held {
		// Already read (the watch's first list after load) or written by
		// this replica: decoding it again would change nothing.
		return
	}
	logs, skipped, err := decodeShard(cm.Name, cm.BinaryData[DataKey])
	// Asked now, not s.leading (set by the writer's next tick): a leader
	// that has not flushed yet must merge, or it would lose what it
	// recorded since.
	leading := s.isLeader()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Skipped += uint64(skipped)
	if err != nil {
		s.stats.ShardErrors++
		s.opts.Log.Error("timeline: unreadable shard; its entries are not shown and the leader rewrites it on its next change", "err", err)
	}
	s.exists[i] = true
	if !leading {
		s.rv[i] = cm.ResourceVersion // the leader keeps its own writes' (see flush)
		for app := range s.shards[i] {
			delete(s.logs, app)
		}
		clear(s.shards[i])
	}
	now := s.opts.Now()
	for _, l := range logs {
		if shardOf(l.app, s.opts.Shards) != i {
			s.stats.Skipped += uint64(len(l.entries))
			continue
		}
		held := s.logOf(l.app)
		if held == nil {
			s.stats.Refused += uint64(len(l.entries))
			continue
		}
		if leading {
			held.merge(l.entries, s.lim, now)
		} else {
			held.entries = l.entries
			held.trim(s.lim, now)
		}
	}
	if !leading {
		// What this replica observed and the leader has not written yet
		// stays visible here.
		for _, e := range s.standby {
			if shardOf(e.App, s.opts.Shards) != i {
				continue
			}
			if l := s.logs[e.App]; l == nil || !l.hasSince(&e) {
				s.addLocked(&e, now, false)
			}
		}
	}
}

// logOf returns the App's log, creating it; nil past MaxApps. s.mu held.
func (s *Store) logOf(app App) *appLog {
	if l, ok := s.logs[app]; ok {
		return l
	}
	if len(s.logs) >= s.opts.MaxApps {
		return nil
	}
	l := &appLog{app: app}
	s.logs[app] = l
	s.shards[shardOf(app, s.opts.Shards)][app] = l
	return l
}

func (s *Store) isLeader() bool { return s.opts.IsLeader != nil && s.opts.IsLeader() }

// Record adds entries (deploys, warnings, freezes, or what Observe
// detected) to the index and sends them to the subscribers. On the leader
// their shard is written within the next flushes. Another replica also
// keeps them aside for a while (Options.Standby): it shows them until the
// leader's write of the same transition arrives, and writes them itself if
// it becomes the leader before that. Recording an entry held already (a
// replay of history records) changes nothing and writes nothing. An entry
// of an unknown kind, without an App's namespace and name, or older than
// MaxAge is refused and counted.
func (s *Store) Record(entries ...Entry) {
	if len(entries) == 0 {
		return
	}
	leading := s.isLeader()
	now := s.opts.Now()
	out := make([]Entry, 0, len(entries))
	s.mu.Lock()
	for _, e := range entries {
		e = e.normalize()
		if !e.Kind.Valid() || e.App.Namespace == "" || e.App.Name == "" || e.LastTime().Before(now.Add(-s.lim.MaxAge)) {
			s.stats.Refused++
			continue
		}
		if !leading {
			if len(s.standby) >= s.opts.Standby {
				s.standby = s.standby[1:]
				s.stats.StandbyDropped++
			}
			s.standby = append(s.standby, e)
		}
		// The leader sends what changed its index; another replica what
		// it saw (its index may hold the leader's record already).
		if s.addLocked(&e, now, leading) || !leading {
			out = append(out, e)
		}
	}
	s.mu.Unlock()
	s.subs.publish(out)
}

// addLocked adds e to the index and, if write, marks its shard for
// writing: at once for a new entry, within Limits.FoldWrite for a repeat
// folded into its episode's entry (foldsDueLocked). It reports whether
// the index changed. s.mu held.
func (s *Store) addLocked(e *Entry, now time.Time, write bool) bool {
	l := s.logOf(e.App)
	if l == nil {
		s.stats.Refused++
		return false
	}
	c := l.add(recOf(e), s.lim, now)
	if c == unchanged || !write {
		return c != unchanged
	}
	if c == folded {
		m, ok := s.folds[e.App]
		if !ok {
			m.first = now
		}
		m.last = now
		s.folds[e.App] = m
		return true
	}
	s.markDirtyLocked(shardOf(e.App, s.opts.Shards), now)
	return true
}

// markDirtyLocked makes shard pending since at, unless it is already.
// s.mu held.
func (s *Store) markDirtyLocked(shard int, at time.Time) {
	if _, ok := s.dirty[shard]; !ok {
		s.dirty[shard] = at
	}
}

// foldMark is when an App's first and last unwritten folds were made.
type foldMark struct{ first, last time.Time }

// foldsDueLocked makes pending the shards of Apps whose unwritten folds
// are due: the episode ended (no repeat for Limits.Quiet) or the first
// waited Limits.FoldWrite. s.mu held.
func (s *Store) foldsDueLocked(now time.Time) {
	for app, m := range s.folds {
		if now.Sub(m.first) >= s.lim.FoldWrite || now.Sub(m.last) >= s.lim.Quiet {
			s.markDirtyLocked(shardOf(app, s.opts.Shards), m.first)
			delete(s.folds, app)
		}
	}
}

// Observe records what changed in an App since its last observed state
// (Transitions). The first state of an App after a start is compared with
// the newest health, sync and drift entries held and the revision of the
// newest entry that has one, so a restart of the console records what
// changed while it was down (a deploy included) and nothing else; an App
// with no entries starts from the state observed.
func (s *Store) Observe(app App, cur State) {
	cur.Containers = append([]Container(nil), cur.Containers[:min(len(cur.Containers), MaxContainers)]...)
	s.mu.Lock()
	prev, ok := s.states[app]
	if !ok {
		if len(s.states) >= s.opts.MaxApps {
			s.stats.Refused++
			s.mu.Unlock()
			return
		}
		prev = s.baselineLocked(app, cur)
		s.observed[app] = s.opts.Now()
	}
	s.states[app] = cur
	s.mu.Unlock()
	s.Record(Transitions(app, prev, cur, s.opts.Now())...)
}

// Forget drops the last observed state of an App (deleted from the
// fleet); its entries stay until they age out.
func (s *Store) Forget(app App) {
	s.mu.Lock()
	delete(s.states, app)
	delete(s.observed, app)
	s.mu.Unlock()
}

// baselineLocked is the state an App is taken to have been in before its
// first observation. s.mu held.
func (s *Store) baselineLocked(app App, cur State) State {
	prev := State{Health: cur.Health, Sync: cur.Sync, Drifted: cur.Drifted, Revision: cur.Revision, Containers: cur.Containers}
	l := s.logs[app]
	if l == nil {
		return prev
	}
	var health, sync, drift, rev bool
	for i := len(l.entries) - 1; i >= 0 && !(health && sync && drift && rev); i-- {
		e := &l.entries[i]
		if !rev && e.rev != "" {
			// The revision the App had when it last recorded (entries of
			// other sources, warnings and audit records, carry none).
			prev.Revision, rev = e.rev, true
		}
		switch {
		case e.kind.kind() == KindHealth && !health:
			prev.Health, health = e.to, true
		case e.kind.kind() == KindSync && !sync:
			prev.Sync, sync = e.to, true
		case e.kind.kind() == KindDrift && !drift:
			prev.Drifted, drift = e.to == DriftDrifted, true
		}
	}
	return prev
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.stats
	st.Apps, st.Pending, st.Folded = len(s.logs), len(s.dirty), len(s.folds)
	for _, l := range s.logs {
		st.Entries += len(l.entries)
	}
	return st
}
