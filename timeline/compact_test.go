package timeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ev(at time.Duration, k Kind, from, to, ref string) Entry {
	return Entry{Time: t0.Add(at), App: testApp, Kind: k, From: from, To: to, Ref: ref, Count: 1}
}

// brief is an entry as the compaction tests compare it.
type brief struct {
	At       time.Duration
	Kind     Kind
	From, To string
	Count    int
	Last     time.Duration
}

// addEntry adds an entry to the log as the store does.
func addEntry(l *appLog, e Entry, lim Limits, now time.Time) {
	e = e.normalize()
	l.add(recOf(&e), lim, now)
}

func briefs(es []Entry) []brief {
	var out []brief
	for _, e := range es {
		b := brief{At: e.Time.Sub(t0), Kind: e.Kind, From: e.From, To: e.To, Count: e.Count}
		if !e.Last.IsZero() {
			b.Last = e.Last.Sub(t0)
		}
		out = append(out, b)
	}
	return out
}

func TestAppLogAdd(t *testing.T) {
	lim := Limits{}.withDefaults()
	m := time.Minute
	tests := []struct {
		name string
		add  []Entry
		want []brief
	}{
		{"flap folds into the first transition",
			[]Entry{ev(0, KindHealth, "Healthy", "Degraded", ""), ev(m, KindHealth, "Degraded", "Healthy", ""), ev(2*m, KindHealth, "Healthy", "Degraded", "")},
			[]brief{{0, KindHealth, "Healthy", "Degraded", 2, 2 * m}}},
		{"flap ending in the other state keeps its last transition",
			[]Entry{ev(0, KindHealth, "Healthy", "Degraded", ""), ev(m, KindHealth, "Degraded", "Healthy", ""), ev(2*m, KindHealth, "Healthy", "Degraded", ""), ev(3*m, KindHealth, "Degraded", "Healthy", "")},
			[]brief{{0, KindHealth, "Healthy", "Degraded", 2, 2 * m}, {3 * m, KindHealth, "Degraded", "Healthy", 1, 0}}},
		{"many flaps stay two entries",
			func() []Entry {
				var es []Entry
				for i := range 20 {
					if i%2 == 0 {
						es = append(es, ev(time.Duration(i)*10*time.Second, KindSync, "Synced", "OutOfSync", ""))
					} else {
						es = append(es, ev(time.Duration(i)*10*time.Second, KindSync, "OutOfSync", "Synced", ""))
					}
				}
				return es
			}(),
			[]brief{{0, KindSync, "Synced", "OutOfSync", 10, 180 * time.Second}, {190 * time.Second, KindSync, "OutOfSync", "Synced", 1, 0}}},
		{"no fold past the window",
			[]Entry{ev(0, KindHealth, "Healthy", "Degraded", ""), ev(m, KindHealth, "Degraded", "Healthy", ""), ev(6*m, KindHealth, "Healthy", "Degraded", "")},
			[]brief{{0, KindHealth, "Healthy", "Degraded", 1, 0}, {m, KindHealth, "Degraded", "Healthy", 1, 0}, {6 * m, KindHealth, "Healthy", "Degraded", 1, 0}}},
		{"a different state is not a flap",
			[]Entry{ev(0, KindHealth, "Healthy", "Progressing", ""), ev(m, KindHealth, "Progressing", "Degraded", ""), ev(2*m, KindHealth, "Degraded", "Healthy", "")},
			[]brief{{0, KindHealth, "Healthy", "Progressing", 1, 0}, {m, KindHealth, "Progressing", "Degraded", 1, 0}, {2 * m, KindHealth, "Degraded", "Healthy", 1, 0}}},
		{"restarts of one container fold, the count grows",
			[]Entry{ev(0, KindRestart, "2", "3", "p/app"), ev(m, KindRestart, "3", "4", "p/app"), ev(2*m, KindRestart, "0", "1", "q/app")},
			[]brief{{0, KindRestart, "2", "4", 2, m}, {2 * m, KindRestart, "0", "1", 1, 0}}},
		{"a crash loop's restarts fold into one episode past FlapWindow",
			func() []Entry {
				var es []Entry
				for i := range 12 { // every 4 minutes for 44 minutes
					es = append(es, ev(time.Duration(i)*4*m, KindRestart, fmt.Sprint(i), fmt.Sprint(i+1), "p/app"))
				}
				return es
			}(),
			[]brief{{0, KindRestart, "0", "12", 12, 44 * m}}},
		{"a restart after Quiet starts a new episode",
			[]Entry{ev(0, KindRestart, "0", "1", "p/app"), ev(4*m, KindRestart, "1", "2", "p/app"), ev(15*m, KindRestart, "2", "3", "p/app")},
			[]brief{{0, KindRestart, "0", "2", 2, 4 * m}, {15 * m, KindRestart, "2", "3", 1, 0}}},
		{"a change of health ends the episode",
			[]Entry{ev(0, KindRestart, "0", "1", "p/app"), ev(m, KindRestart, "1", "2", "p/app"),
				ev(2*m, KindHealth, "Degraded", "Healthy", ""), ev(3*m, KindRestart, "2", "3", "p/app")},
			[]brief{{0, KindRestart, "0", "2", 2, m}, {2 * m, KindHealth, "Degraded", "Healthy", 1, 0}, {3 * m, KindRestart, "2", "3", 1, 0}}},
		{"the episodes of two containers fold apart, interleaved",
			[]Entry{ev(0, KindRestart, "0", "1", "p/app"), ev(m, KindRestart, "0", "1", "p/side"),
				ev(6*m, KindRestart, "1", "2", "p/app"), ev(7*m, KindRestart, "1", "2", "p/side")},
			[]brief{{0, KindRestart, "0", "2", 2, 6 * m}, {m, KindRestart, "0", "2", 2, 7 * m}}},
		{"deploys never fold",
			[]Entry{ev(0, KindDeploy, "", "1.2.0", "r1"), ev(m, KindDeploy, "", "1.2.0", "r1")},
			[]brief{{0, KindDeploy, "", "1.2.0", 1, 0}, {m, KindDeploy, "", "1.2.0", 1, 0}}},
		{"the same entry twice is held once",
			[]Entry{ev(0, KindDeploy, "", "1.2.0", "r1"), ev(0, KindDeploy, "", "1.2.0", "r1")},
			[]brief{{0, KindDeploy, "", "1.2.0", 1, 0}}},
		{"a late entry goes in time order",
			[]Entry{ev(2*m, KindHealth, "Healthy", "Degraded", ""), ev(m, KindDeploy, "", "1.3.0", "r2")},
			[]brief{{m, KindDeploy, "", "1.3.0", 1, 0}, {2 * m, KindHealth, "Healthy", "Degraded", 1, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &appLog{app: testApp}
			for _, e := range tt.add {
				addEntry(l, e, lim, e.Time)
			}
			if diff := cmp.Diff(tt.want, briefs(l.list())); diff != "" {
				t.Errorf("entries after add (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppLogWarningsFoldOnSameMessage(t *testing.T) {
	lim := Limits{}.withDefaults()
	l := &appLog{app: testApp}
	w := func(at time.Duration, msg string) Entry {
		e := ev(at, KindWarning, "", "", "apps:Deployment:shop:checkout")
		e.Message = msg
		return e
	}
	addEntry(l, w(0, "Back-off pulling image"), lim, t0)
	addEntry(l, w(time.Second, "Back-off pulling image"), lim, t0)
	addEntry(l, w(2*time.Second, "FailedScheduling"), lim, t0)
	got := []string{}
	for _, e := range l.list() {
		got = append(got, fmt.Sprintf("%s x%d", e.Message, e.Count))
	}
	if diff := cmp.Diff([]string{"Back-off pulling image x2", "FailedScheduling x1"}, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func TestAppLogCaps(t *testing.T) {
	tests := []struct {
		name      string
		lim       Limits
		n         int
		every     time.Duration
		wantKept  int
		wantFirst time.Duration
	}{
		{"per App cap keeps the newest", Limits{PerApp: 10}, 25, time.Hour, 10, 15 * time.Hour},
		{"age cap", Limits{MaxAge: 5 * time.Hour}, 25, time.Hour, 6, 19 * time.Hour},
		{"smaller of both", Limits{PerApp: 3, MaxAge: 5 * time.Hour}, 25, time.Hour, 3, 22 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := tt.lim.withDefaults()
			l := &appLog{app: testApp}
			var last time.Time
			for i := range tt.n {
				e := ev(time.Duration(i)*tt.every, KindDeploy, "", fmt.Sprint(i), "")
				last = e.Time
				addEntry(l, e, lim, last)
			}
			es := l.list()
			if len(es) != tt.wantKept || es[0].Time.Sub(t0) != tt.wantFirst || !es[len(es)-1].Time.Equal(last) {
				t.Errorf("kept %d entries from %v, newest %v; want %d from %v, newest %v",
					len(es), es[0].Time.Sub(t0), es[len(es)-1].Time.Sub(t0), tt.wantKept, tt.wantFirst, last.Sub(t0))
			}
		})
	}
}

func TestAppLogMerge(t *testing.T) {
	lim := Limits{}.withDefaults()
	m := time.Minute
	l := &appLog{app: testApp}
	a := ev(0, KindHealth, "Healthy", "Degraded", "").normalize()
	b := ev(m, KindDeploy, "", "1.3.0", "r2").normalize()
	addEntry(l, a, lim, t0)
	remote := a
	remote.Count, remote.Last = 3, t0.Add(2*m)
	in := []rec{recOf(&remote), recOf(&b)}
	if !l.merge(in, lim, t0.Add(2*m)) {
		t.Fatal("merge() = false, want true (entries added)")
	}
	want := []brief{{0, KindHealth, "Healthy", "Degraded", 3, 2 * m}, {m, KindDeploy, "", "1.3.0", 1, 0}}
	if diff := cmp.Diff(want, briefs(l.list())); diff != "" {
		t.Errorf("after merge (-want +got):\n%s", diff)
	}
	if l.merge(in, lim, t0.Add(2*m)) {
		t.Error("merge() of entries held = true, want false")
	}
}

// TestAppLogAddReportsFolds: a repeat folded into its episode is a fold
// (its shard need not be written at once), a new entry or a flap a
// change, and a repeat inside a folded span (a Warning Event read again)
// no change at all.
func TestAppLogAddReportsFolds(t *testing.T) {
	lim := Limits{}.withDefaults()
	m := time.Minute
	backOff := func(at time.Duration, msg string) Entry {
		e := ev(at, KindWarning, "", "", "Pod:shop:checkout-1")
		e.Message = msg
		return e
	}
	l := &appLog{app: testApp}
	steps := []struct {
		e    Entry
		want change
	}{
		{backOff(0, "BackOff: restarting failed container"), changed},
		{backOff(30*time.Second, "Unhealthy: liveness probe failed"), changed},
		{backOff(2*m, "BackOff: restarting failed container"), folded},
		{backOff(3*m, "Unhealthy: liveness probe failed"), folded},
		{backOff(8*m, "BackOff: restarting failed container"), folded},
		{backOff(2*m, "BackOff: restarting failed container"), unchanged}, // read again
		{backOff(8*m, "BackOff: restarting failed container"), unchanged}, // read again
		{ev(9*m, KindHealth, "Healthy", "Degraded", ""), changed},
		{backOff(10*m, "BackOff: restarting failed container"), changed}, // health changed: a new episode
	}
	for i, st := range steps {
		e := st.e.normalize()
		if got := l.add(recOf(&e), lim, e.Time); got != st.want {
			t.Errorf("step %d: add(%s %v %q) = %d, want %d", i, e.Kind, e.Time.Sub(t0), e.Message, got, st.want)
		}
	}
	got := []string{}
	for _, e := range l.list() {
		got = append(got, fmt.Sprintf("%v %s x%d", e.Time.Sub(t0), e.Message, e.Count))
	}
	want := []string{"0s BackOff: restarting failed container x3", "30s Unhealthy: liveness probe failed x2",
		"9m0s  x1", "10m0s BackOff: restarting failed container x1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

// TestAppLogMergeOneEpisode: two copies of one restart episode (the
// leader's, folded further than what the shard it reads holds) merge into
// one entry with the larger count and the restart count of the later.
func TestAppLogMergeOneEpisode(t *testing.T) {
	lim := Limits{}.withDefaults()
	m := time.Minute
	l := &appLog{app: testApp}
	for i := range 7 {
		addEntry(l, ev(time.Duration(i)*4*m, KindRestart, fmt.Sprint(i), fmt.Sprint(i+1), "p/app"), lim, t0)
	}
	shard := &appLog{app: testApp}
	for i := range 5 {
		addEntry(shard, ev(time.Duration(i)*4*m, KindRestart, fmt.Sprint(i), fmt.Sprint(i+1), "p/app"), lim, t0)
	}
	l.merge(shard.entries, lim, t0.Add(time.Hour))
	want := []brief{{0, KindRestart, "0", "7", 7, 24 * m}}
	if diff := cmp.Diff(want, briefs(l.list())); diff != "" {
		t.Errorf("leader's episode merged with the shard's older copy (-want +got):\n%s", diff)
	}
	shard.merge(l.entries, lim, t0.Add(time.Hour))
	if diff := cmp.Diff(want, briefs(shard.list())); diff != "" {
		t.Errorf("older copy merged with the newer (-want +got):\n%s", diff)
	}
}
