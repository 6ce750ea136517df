package recordfeed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
)

// fakeRecords is an audit index in memory: List pages newest first, as
// audit.Store does, honouring Since and Continue; err fails the next List.
type fakeRecords struct {
	mu       sync.Mutex
	recs     []audit.Record
	pageSize int
	err      error
	lists    int
}

func (f *fakeRecords) add(rs ...audit.Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recs = append(f.recs, rs...)
}

func (f *fakeRecords) List(_ context.Context, flt audit.Filter) (audit.Page, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	if err := f.err; err != nil {
		f.err = nil
		return audit.Page{}, err
	}
	var out []audit.Record
	for _, r := range f.recs {
		if !r.Time.Before(flt.Since) {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b audit.Record) int { return b.Time.Compare(a.Time) })
	start := 0
	if flt.Continue != "" {
		start, _ = strconv.Atoi(flt.Continue)
	}
	size := min(flt.Limit, f.pageSize)
	end := min(start+size, len(out))
	p := audit.Page{Records: out[start:end]}
	if end < len(out) {
		p.Continue = strconv.Itoa(end)
	}
	return p, nil
}

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

func rec(id string, at time.Time) audit.Record {
	return audit.Record{ID: id, Time: at, Verb: audit.VerbApply, Outcome: audit.OutcomeSucceeded}
}

// collector is a subscriber that notes the ids it is delivered, in order.
type collector struct{ got []string }

func (c *collector) deliver(recs []audit.Record) {
	for _, r := range recs {
		c.got = append(c.got, r.ID)
	}
}

func (c *collector) take() []string {
	out := c.got
	c.got = nil
	return out
}

// TestFeedOrderAndOnce: records are delivered oldest first (by time, then
// id), across pages, whatever order the index returns; each once, however
// many passes read it in the window; a record appended late with an older
// time is delivered when it appears.
func TestFeedOrderAndOnce(t *testing.T) {
	now := t0
	src := &fakeRecords{pageSize: 2}
	src.add(rec("b", t0.Add(-time.Minute)), rec("a", t0.Add(-time.Minute)), rec("c", t0.Add(-30*time.Second)), rec("old", t0.Add(-2*time.Minute)))
	f := New(src, Options{Now: func() time.Time { return now }})
	var c collector
	f.Subscribe(Subscription{Name: "test", Backfill: 5 * time.Minute, Deliver: c.deliver})
	if err := f.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"old", "a", "b", "c"}, c.take()); diff != "" {
		t.Errorf("first pass (-want +got):\n%s", diff)
	}
	for range 3 {
		now = now.Add(10 * time.Second)
		if err := f.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.take(); len(got) != 0 {
		t.Errorf("passes over the same records delivered %v again, want nothing", got)
	}
	// An apply that ran 20 minutes appears with its start time, beside a
	// new one.
	src.add(rec("new", now), rec("long", now.Add(-20*time.Minute)))
	now = now.Add(10 * time.Second)
	if err := f.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"long", "new"}, c.take()); diff != "" {
		t.Errorf("after two appends (-want +got):\n%s", diff)
	}
}

// TestFeedFailedReadLosesNothing: a failed read delivers nothing and
// moves nothing: the next pass delivers what appeared meanwhile, once,
// even after the cursor's own time has moved past the window of the
// failed pass.
func TestFeedFailedReadLosesNothing(t *testing.T) {
	now := t0
	src := &fakeRecords{pageSize: audit.MaxLimit}
	f := New(src, Options{Window: 5 * time.Minute, Now: func() time.Time { return now }})
	var c collector
	f.Subscribe(Subscription{Deliver: c.deliver})
	if err := f.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	src.add(rec("during", now.Add(time.Second)))
	now = now.Add(time.Hour)
	src.err = errors.New("apiserver down")
	if err := f.Pass(t.Context()); err == nil {
		t.Fatal("Pass with a failing index = nil, want its error")
	}
	if got := c.take(); len(got) != 0 {
		t.Fatalf("a failed read delivered %v", got)
	}
	if err := f.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"during"}, c.take()); diff != "" {
		t.Errorf("the pass after a failed read (-want +got):\n%s", diff)
	}
}

// TestFeedResumeAfterRestart: a feed keeps nothing across a restart; a new
// one over the same index delivers a subscription's backfill once, and
// to a subscription without backfill none of the records that were there
// before it, then what appears after to both, once.
func TestFeedResumeAfterRestart(t *testing.T) {
	now := t0
	clock := func() time.Time { return now }
	src := &fakeRecords{pageSize: 3}
	for i := range 10 {
		src.add(rec(fmt.Sprintf("r%02d", i), t0.Add(-time.Duration(10-i)*time.Minute)))
	}
	run := func() (*Feed, *collector, *collector) {
		f := New(src, Options{Now: clock})
		var backfill, live collector
		f.Subscribe(Subscription{Name: "timeline", Backfill: 5 * time.Minute, Deliver: backfill.deliver})
		f.Subscribe(Subscription{Name: "notify", Deliver: live.deliver})
		if err := f.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
		return f, &backfill, &live
	}
	_, backfill, live := run()
	wantBackfill := []string{"r05", "r06", "r07", "r08", "r09"}
	if diff := cmp.Diff(wantBackfill, backfill.take()); diff != "" {
		t.Errorf("backfill of 5 minutes (-want +got):\n%s", diff)
	}
	if got := live.take(); len(got) != 0 {
		t.Errorf("a subscription without backfill was delivered %v at start, want nothing", got)
	}
	// The process restarts a minute later; a record appeared meanwhile.
	now = now.Add(time.Minute)
	src.add(rec("r10", now.Add(-10*time.Second)))
	f, backfill, live := run()
	if diff := cmp.Diff(append(wantBackfill[1:], "r10"), backfill.take()); diff != "" {
		t.Errorf("backfill after the restart (-want +got):\n%s", diff)
	}
	if got := live.take(); len(got) != 0 {
		t.Errorf("after the restart, a subscription without backfill was delivered %v, want nothing", got)
	}
	src.add(rec("r11", now))
	now = now.Add(10 * time.Second)
	if err := f.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*collector{backfill, live} {
		if diff := cmp.Diff([]string{"r11"}, c.take()); diff != "" {
			t.Errorf("a record after the restart (-want +got):\n%s", diff)
		}
	}
}

// TestFeedInactiveCatchesUp: a subscription is delivered nothing while
// not Active; the records that appeared meanwhile (still in the window)
// come when it turns active, once; those there before it subscribed,
// never.
func TestFeedInactiveCatchesUp(t *testing.T) {
	now := t0
	src := &fakeRecords{pageSize: audit.MaxLimit}
	src.add(rec("before", t0.Add(-time.Minute)))
	f := New(src, Options{Now: func() time.Time { return now }})
	active := false
	var c collector
	f.Subscribe(Subscription{Active: func() bool { return active }, Deliver: c.deliver})
	for _, id := range []string{"x", "y"} {
		if err := f.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
		src.add(rec(id, now.Add(-2*time.Minute))) // an action that started before the console did
		now = now.Add(10 * time.Second)
	}
	if err := f.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); len(got) != 0 {
		t.Fatalf("an inactive subscription was delivered %v", got)
	}
	active = true
	for range 2 {
		now = now.Add(10 * time.Second)
		if err := f.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"x", "y"}, c.take()); diff != "" {
		t.Errorf("deliveries once active (-want +got):\n%s", diff)
	}
}

// TestFeedLateSubscription: a subscription added after passes ran gets its
// backfill on the next pass, beyond the window too, and nothing twice;
// the others are not delivered those records again.
func TestFeedLateSubscription(t *testing.T) {
	now := t0
	src := &fakeRecords{pageSize: audit.MaxLimit}
	src.add(rec("ancient", t0.Add(-3*time.Hour)), rec("recent", t0.Add(-time.Minute)))
	f := New(src, Options{Now: func() time.Time { return now }})
	var early, late collector
	f.Subscribe(Subscription{Backfill: time.Hour, Deliver: early.deliver})
	if err := f.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"recent"}, early.take()); diff != "" {
		t.Errorf("early subscription (-want +got):\n%s", diff)
	}
	now = now.Add(10 * time.Second)
	f.Subscribe(Subscription{Backfill: 24 * time.Hour, Deliver: late.deliver})
	if err := f.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ancient", "recent"}, late.take()); diff != "" {
		t.Errorf("late subscription (-want +got):\n%s", diff)
	}
	if got := early.take(); len(got) != 0 {
		t.Errorf("the late subscription's backfill reached the early one again: %v", got)
	}
}

// hostileRecords is an index of a million records within the last
// minute, made up as they are read, in pages of its own size whatever
// the Limit asked; it counts what it handed out.
type hostileRecords struct {
	now    time.Time
	n      int
	served int
	pages  int
}

func (h *hostileRecords) List(_ context.Context, flt audit.Filter) (audit.Page, error) {
	h.pages++
	start := 0
	if flt.Continue != "" {
		start, _ = strconv.Atoi(flt.Continue)
	}
	end := min(start+2*audit.MaxLimit, h.n) // more than Limit: a lister that ignores it
	p := audit.Page{}
	for i := start; i < end; i++ {
		p.Records = append(p.Records, rec(fmt.Sprintf("h%07d", h.n-i), h.now.Add(-time.Duration(i)*time.Microsecond)))
	}
	h.served += len(p.Records)
	if end < h.n {
		p.Continue = strconv.Itoa(end)
	}
	return p, nil
}

// TestFeedBoundOnHostileRecordSet: a million records in the window cost
// one bounded read a pass (at most MaxRecords delivered, a bounded number
// of pages), the feed's memory stays bounded pass after pass, and a
// lister that pages forever with empty pages is left after the page
// bound.
func TestFeedBoundOnHostileRecordSet(t *testing.T) {
	now := t0
	h := &hostileRecords{now: now, n: 1_000_000}
	f := New(h, Options{MaxRecords: 1000, Now: func() time.Time { return now }})
	delivered := 0
	f.Subscribe(Subscription{Backfill: time.Hour, Deliver: func(recs []audit.Record) { delivered += len(recs) }})
	for range 5 {
		h.now = h.now.Add(time.Second)
		now = h.now
		h.pages = 0
		if err := f.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
		if h.pages > 1000/audit.MaxLimit+1 {
			t.Errorf("one pass read %d pages, want at most %d", h.pages, 1000/audit.MaxLimit+1)
		}
		if len(f.seen) > 2*1000 {
			t.Errorf("the feed knows %d ids, want at most %d", len(f.seen), 2*1000)
		}
	}
	if delivered > 5*1000 {
		t.Errorf("delivered %d records in 5 passes, want at most %d", delivered, 5*1000)
	}
	if delivered == 0 {
		t.Errorf("delivered nothing, want the newest records of each pass")
	}

	endless := listerFunc(func(context.Context, audit.Filter) (audit.Page, error) {
		return audit.Page{Continue: "more"}, nil
	})
	calls := 0
	counted := listerFunc(func(ctx context.Context, flt audit.Filter) (audit.Page, error) {
		calls++
		return endless(ctx, flt)
	})
	if err := New(counted, Options{}).Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if want := MaxRecords/audit.MaxLimit + 1; calls != want {
		t.Errorf("a lister of endless empty pages was read %d times, want %d", calls, want)
	}
}

type listerFunc func(context.Context, audit.Filter) (audit.Page, error)

func (l listerFunc) List(ctx context.Context, f audit.Filter) (audit.Page, error) { return l(ctx, f) }

// TestFeedDuplicatesAndNoID: a record a page repeats is delivered once; a
// record without an id, never.
func TestFeedDuplicatesAndNoID(t *testing.T) {
	r := rec("dup", t0)
	l := listerFunc(func(context.Context, audit.Filter) (audit.Page, error) {
		return audit.Page{Records: []audit.Record{r, r, rec("", t0)}}, nil
	})
	f := New(l, Options{Now: func() time.Time { return t0 }})
	var c collector
	f.Subscribe(Subscription{Backfill: time.Minute, Deliver: c.deliver})
	for range 2 {
		if err := f.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"dup"}, c.take()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestFeedRun: Run passes at once (no wait for the first tick) and ends
// with its context.
func TestFeedRun(t *testing.T) {
	src := &fakeRecords{pageSize: audit.MaxLimit}
	src.add(rec("a", time.Now().Add(-time.Second)))
	f := New(src, Options{Every: time.Hour})
	got := make(chan []audit.Record, 1)
	f.Subscribe(Subscription{Backfill: time.Minute, Deliver: func(recs []audit.Record) { got <- recs }})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		f.Run(ctx)
		close(done)
	}()
	select {
	case recs := <-got:
		if len(recs) != 1 || recs[0].ID != "a" {
			t.Errorf("Run delivered %v, want record a", recs)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run delivered nothing within 30s")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not end with its context")
	}
}
