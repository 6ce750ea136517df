package timeline

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/labels"
)

// writeTimeout bounds one shard write (and the read after a conflict).
const writeTimeout = 10 * time.Second

// flush is one tick of the writer: on a replica that does not lead it ages
// out the standby entries; on the leader, once FlushInterval has passed
// since the last write, it writes one shard, the one whose change has
// waited longest. Nothing pending, nothing written.
func (s *Store) flush(ctx context.Context) { s.write(ctx, false) }

// Handover writes, on a clean stop of the Lease holder and before its
// Lease is released, every shard that waits: changes not yet written and
// folded repeats (which otherwise wait up to Limits.FoldWrite), one shard
// after the other without the FlushInterval between them, until none is
// pending or ctx ends (bound it: a stop has its grace). A replica that
// does not lead, or whose shards never loaded, writes nothing. It
// returns the shards still pending (0: nothing is lost).
func (s *Store) Handover(ctx context.Context) int {
	select {
	case <-s.ready:
	default:
		return 0 // never loaded: writing would replace shards unread
	}
	if !s.isLeader() {
		return 0
	}
	s.mu.Lock()
	for app, m := range s.folds {
		s.markDirtyLocked(shardOf(app, s.opts.Shards), m.first)
		delete(s.folds, app)
	}
	tries := 2 * len(s.dirty) // each shard twice: a conflict merges, then writes
	s.mu.Unlock()
	for ; tries > 0 && ctx.Err() == nil; tries-- {
		s.mu.Lock()
		n := len(s.dirty)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		s.write(ctx, true)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dirty)
}

// write is one write of the oldest pending shard by the leader; a
// handover does not wait FlushInterval since the last write.
func (s *Store) write(ctx context.Context, handover bool) {
	leading := s.isLeader()
	at := s.opts.Now()
	s.mu.Lock()
	if !leading {
		s.leading = false
		cut := at.Add(-s.opts.StandbyAge)
		n := 0
		for n < len(s.standby) && s.standby[n].Time.Before(cut) {
			n++
		}
		s.standby = s.standby[n:]
		clear(s.folds) // the next leader writes its own
		s.mu.Unlock()
		return
	}
	if !s.leading {
		s.leading = true
		s.adoptStandbyLocked(at)
	}
	s.foldsDueLocked(at)
	shard, since, ok := s.oldestDirtyLocked()
	if !ok {
		s.stats.IdleTicks++
	}
	if !ok || !handover && at.Sub(s.lastWrite) < s.opts.FlushInterval {
		s.mu.Unlock()
		return
	}
	delete(s.dirty, shard)
	logs := make([]*appLog, 0, len(s.shards[shard]))
	before := map[App]map[entryKey]bool{}
	for app, l := range s.shards[shard] {
		delete(s.folds, app) // written now with the rest of the shard
		if l.trim(s.lim, at); len(l.entries) == 0 {
			// Every entry aged out: the App leaves the index (and MaxApps).
			delete(s.shards[shard], app)
			delete(s.logs, app)
			continue
		}
		c := &appLog{app: app, entries: slices.Clone(l.entries)}
		keys := make(map[entryKey]bool, len(c.entries))
		for i := range c.entries {
			keys[keyOf(&c.entries[i])] = true
		}
		before[app] = keys
		logs = append(logs, c)
	}
	rv, exists := s.rv[shard], s.exists[shard]
	s.mu.Unlock()

	sortLogs(logs)
	data, dropped, err := fitShard(logs, MaxShardBytes)
	if err != nil {
		s.failed(shard, since, err)
		return
	}
	if dropped > 0 {
		s.dropFitted(shard, logs, before, dropped)
	}
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	cms := s.cms.ConfigMaps(s.opts.Namespace)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ShardName(shard), Namespace: s.opts.Namespace, ResourceVersion: rv,
			Labels: map[string]string{labels.Kind: KindValue}},
		BinaryData: map[string][]byte{DataKey: data},
	}
	s.mu.Lock()
	s.lastWrite = s.opts.Now()
	s.mu.Unlock()
	var out *corev1.ConfigMap
	if !exists {
		out, err = cms.Create(wctx, cm, metav1.CreateOptions{FieldManager: appcr.FieldManager})
	} else {
		out, err = cms.Update(wctx, cm, metav1.UpdateOptions{FieldManager: appcr.FieldManager})
	}
	s.mu.Lock()
	s.stats.Writes++
	s.mu.Unlock()
	switch {
	case err == nil:
		s.mu.Lock()
		s.rv[shard], s.exists[shard] = out.ResourceVersion, true
		s.mu.Unlock()
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		// Another writer (a leader that has not yet noticed it lost the
		// Lease) wrote the shard: take its entries and write the union on
		// a later tick, never a second write in this one.
		s.mu.Lock()
		s.stats.Conflicts++
		s.mu.Unlock()
		got, gerr := cms.Get(wctx, ShardName(shard), metav1.GetOptions{})
		if gerr == nil {
			s.observeShard(got) // as the leader: merges
			s.mu.Lock()
			s.rv[shard] = got.ResourceVersion
			s.mu.Unlock()
		}
		s.redirty(shard, since)
	case apierrors.IsNotFound(err):
		s.mu.Lock()
		s.rv[shard], s.exists[shard] = "", false // deleted by someone: create it again
		s.mu.Unlock()
		s.failed(shard, since, err)
	default:
		s.failed(shard, since, err)
	}
}

// failed counts and logs a write that failed and keeps its shard pending.
func (s *Store) failed(shard int, since time.Time, err error) {
	s.mu.Lock()
	s.stats.WriteErrors++
	s.mu.Unlock()
	s.opts.Log.Error("timeline: write shard; retrying on a later flush", "configmap", s.opts.Namespace+"/"+ShardName(shard), "err", err)
	s.redirty(shard, since)
}

// redirty marks a shard pending again since its oldest unwritten change.
func (s *Store) redirty(shard int, since time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.dirty[shard]; !ok || since.Before(t) {
		s.dirty[shard] = since
	}
}

// dropFitted removes from the index the entries fitShard dropped from the
// shard's copy (those in before and no longer in the copy).
func (s *Store) dropFitted(shard int, fitted []*appLog, before map[App]map[entryKey]bool, dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Dropped += uint64(dropped)
	for _, c := range fitted {
		kept := make(map[entryKey]bool, len(c.entries))
		for i := range c.entries {
			kept[keyOf(&c.entries[i])] = true
		}
		l := s.shards[shard][c.app]
		if l == nil {
			continue
		}
		was := before[c.app]
		n := 0
		for _, e := range l.entries {
			k := keyOf(&e)
			if was[k] && !kept[k] {
				continue
			}
			l.entries[n] = e
			n++
		}
		clear(l.entries[n:])
		l.entries = l.entries[:n]
	}
}

// oldestDirtyLocked returns the pending shard whose change waited longest
// (the lowest index among equals). s.mu held.
func (s *Store) oldestDirtyLocked() (int, time.Time, bool) {
	best, at, ok := 0, time.Time{}, false
	for i, t := range s.dirty {
		if !ok || t.Before(at) || t.Equal(at) && i < best {
			best, at, ok = i, t, true
		}
	}
	return best, at, ok
}

// adoptStandbyLocked adds, on becoming the leader, the entries this
// replica recorded while another led and that are newer than the newest
// entry of their kind and ref the old leader wrote: what the old leader
// recorded but never wrote. s.mu held.
func (s *Store) adoptStandbyLocked(now time.Time) {
	for _, e := range s.standby {
		l := s.logs[e.App]
		if l == nil {
			s.addLocked(&e, now, true)
			continue
		}
		// Entries the old leader wrote replaced this replica's own
		// (observeShard): one still held was never written.
		if l.holds(&e) {
			i := shardOf(e.App, s.opts.Shards)
			s.markDirtyLocked(i, now)
			continue
		}
		if !l.hasSince(&e) {
			s.addLocked(&e, now, true)
		}
	}
	s.standby = nil
}

// holds reports whether the log holds e (by time, kind, states and ref).
func (l *appLog) holds(e *Entry) bool {
	r := recOf(e)
	k := keyOf(&r)
	for i := len(l.entries) - 1; i >= 0 && l.entries[i].at >= r.at; i-- {
		if keyOf(&l.entries[i]) == k {
			return true
		}
	}
	return false
}

// hasSince reports whether the log holds an entry of e's kind and ref at
// or after e's time.
func (l *appLog) hasSince(e *Entry) bool {
	at := e.Time.UnixMilli()
	for i := len(l.entries) - 1; i >= 0; i-- {
		x := &l.entries[i]
		if x.kind.kind() == e.Kind && x.ref == e.Ref && x.lastAt() >= at {
			return true
		}
	}
	return false
}
