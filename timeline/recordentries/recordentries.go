// Package recordentries turns audit records into timeline entries. It
// sits beside timeline, not in it, because the audit package is above the
// timeline (notify imports the timeline; audit imports deployplan).
package recordentries

import (
	"slices"
	"strings"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/timeline"
)

// RecordEntries turns audit records into timeline entries: deploys
// (applies, restores, syncs), rollbacks and day-2 actions, one per App the
// record names. The timeline subscribes it to the one feed of records
// (audit/recordfeed), which hands it each record once, oldest first. It
// remembers, per record stream, the last deploy's record id, so that a
// deploy entry names the record its diff starts from; it is not safe for
// concurrent use (the feed delivers on one goroutine).
type RecordEntries struct {
	// isApp says whether group/kind is the App resource of cluster.
	isApp func(cluster, group, kind string) bool
	// prev is the last succeeded deploy record of each stream.
	prev map[string]string
}

// NewRecordEntries returns the entries of records; isApp says whether
// group/kind is the App resource of a cluster (for a record that names no
// App but the objects it touched).
func NewRecordEntries(isApp func(cluster, group, kind string) bool) *RecordEntries {
	return &RecordEntries{isApp: isApp, prev: map[string]string{}}
}

// streamOf is a record id's stream: ids are "<stream>-<sequence>".
func streamOf(id string) string {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return id
	}
	return id[:i]
}

// Entries returns the entries of recs, oldest first (recs in any order).
// A refused record gives none (it changed nothing). A deploy entry's Ref
// is its record id, From the id of the stream's previous succeeded deploy
// ("" for the first), To the environment applied ("" for a sync of one
// App); an operate entry's From and To are the value it changed.
func (f *RecordEntries) Entries(recs []audit.Record) []timeline.Entry {
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b audit.Record) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	var out []timeline.Entry
	for i := range recs {
		r := &recs[i]
		if r.ID == "" || r.Outcome == audit.OutcomeRefused {
			continue
		}
		var kind timeline.Kind
		var from, to string
		switch r.Verb {
		case audit.VerbApply, audit.VerbRestore, audit.VerbSync, audit.VerbAutoSync, audit.VerbSelfHeal:
			kind, from, to = timeline.KindDeploy, f.prev[streamOf(r.ID)], r.Environment
			if r.Outcome == audit.OutcomeSucceeded && (r.Verb == audit.VerbApply || r.Verb == audit.VerbRestore) {
				f.prev[streamOf(r.ID)] = r.ID
			}
		case audit.VerbRollback:
			kind = timeline.KindRollback
		case audit.VerbOperate:
			// A day-2 action: the value it changed, before and after.
			kind, from, to = timeline.KindOperate, r.Before, r.After
		default:
			// Freezes and auto-sync pauses are no entries: each App's
			// are worked out from the freezes and the pause records when
			// its timeline is read (timeline/overlays), so one freeze
			// of a whole environment costs no write per App, and a
			// record naming an App draws no second band.
			continue
		}
		msg := string(r.Verb)
		if r.Environment != "" {
			msg += " of " + r.Environment
		}
		if r.Actor.Email != "" || r.Actor.Subject != "" {
			msg += " by " + r.Actor.String()
		}
		if r.Commit != "" {
			msg += " at " + shortCommit(r.Commit)
		}
		msg += ": " + string(r.Outcome)
		if r.Message != "" {
			msg += ": " + r.Message
		}
		// No Revision: an entry's revision is the App's declared version,
		// which the App feed records (and compares after a restart).
		for _, app := range AppsOf(r, f.isApp) {
			out = append(out, timeline.Entry{Time: r.Time, App: app, Kind: kind, From: from, To: to, Ref: r.ID, Message: msg})
		}
	}
	return out
}

// AppsOf are the Apps a record is about: the App it names, else the App
// objects it touched (an apply of an environment), in its cluster; isApp
// says whether group/kind is the App resource of a cluster. The timeline's
// entries and the delivery metrics (insights) read a record's Apps here.
func AppsOf(r *audit.Record, isApp func(cluster, group, kind string) bool) []timeline.App {
	if r.App != "" && r.Namespace != "" {
		return []timeline.App{{Cluster: r.Cluster, Namespace: r.Namespace, Name: r.App}}
	}
	var out []timeline.App
	for _, o := range r.Objects {
		if o.Namespace != "" && isApp(r.Cluster, o.Group, o.Kind) {
			out = append(out, timeline.App{Cluster: r.Cluster, Namespace: o.Namespace, Name: o.Name})
		}
	}
	return out
}

// shortCommit is a commit as a revision shows it: its first 12 characters.
func shortCommit(c string) string { return c[:min(len(c), 12)] }

// Sink is what the entries are handed to (implemented by
// *timeline.Store).
type Sink interface {
	Record(entries ...timeline.Entry)
}

// Subscription is the timeline's subscription to the one feed of records
// (audit/recordfeed): every replica takes them (every replica feeds the
// timeline; its Lease holder writes), from the timeline's whole age back
// at start (the store keeps what it holds already and writes nothing for
// those), and hands their entries to sink.
func (f *RecordEntries) Subscription(sink Sink) recordfeed.Subscription {
	return recordfeed.Subscription{Name: "timeline", Backfill: timeline.DefaultMaxAge,
		Deliver: func(recs []audit.Record) { sink.Record(f.Entries(recs)...) }}
}
