package insights

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/timeline"
)

// now ends every test's window.
var now = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

const (
	appGroup = "hanzo.ai"
	appKind  = "App"
)

func isApp(_, group, kind string) bool { return group == appGroup && kind == appKind }

var (
	api    = timeline.App{Cluster: "c1", Namespace: "dev", Name: "api"}
	worker = timeline.App{Cluster: "c1", Namespace: "dev", Name: "worker"}
	stgAPI = timeline.App{Cluster: "c1", Namespace: "staging", Name: "api"}
)

// envOf places the test Apps: namespace dev is environment dev, staging
// is staging.
func envOf(a timeline.App) string { return a.Namespace }

func sourceOf(env string) string {
	if env == "staging" {
		return "dev"
	}
	return ""
}

// apply is a succeeded apply of env at commit, started ago before now,
// taking a minute, applying apps.
func apply(id, env, commit string, ago time.Duration, apps ...timeline.App) audit.Record {
	r := audit.Record{ID: id, Time: now.Add(-ago), Duration: audit.Duration(time.Minute), Verb: audit.VerbApply, Cluster: "c1",
		Environment: env, Namespace: env, Commit: commit, Outcome: audit.OutcomeSucceeded}
	for _, a := range apps {
		r.Objects = append(r.Objects, audit.Object{Group: appGroup, Version: "v1", Kind: appKind, Namespace: a.Namespace, Name: a.Name})
	}
	return r
}

func health(a timeline.App, from, to string, ago time.Duration) timeline.Entry {
	return timeline.Entry{Time: now.Add(-ago), App: a, Kind: timeline.KindHealth, From: from, To: to, Count: 1}
}

func input(recs []audit.Record, entries []timeline.Entry) Input {
	return Input{Now: now, Window: Window7d, Records: recs, Health: entries, IsApp: isApp, EnvOf: envOf, SourceOf: sourceOf}
}

func TestDeploymentFrequency(t *testing.T) {
	refused := apply("dev-9", "dev", "c9", 2*time.Hour, api)
	refused.Outcome = audit.OutcomeRefused
	for _, tc := range []struct {
		name string
		recs []audit.Record
		want Frequency
	}{
		{"no applies", nil, Frequency{}},
		{"three commits", []audit.Record{
			apply("dev-1", "dev", "c1", 72*time.Hour, api, worker),
			apply("dev-2", "dev", "c2", 48*time.Hour, api, worker),
			apply("dev-3", "dev", "c3", 24*time.Hour, api, worker),
		}, Frequency{Deployments: 3, PerDay: 0.43}},
		{"a re-apply of the same commit is no deployment", []audit.Record{
			apply("dev-1", "dev", "c1", 72*time.Hour, api),
			apply("dev-2", "dev", "c1", 48*time.Hour, api),
		}, Frequency{Deployments: 1, PerDay: 0.14}},
		{"the commit before the window counts as the one before", []audit.Record{
			apply("dev-1", "dev", "c1", 8*24*time.Hour, api),
			apply("dev-2", "dev", "c1", 48*time.Hour, api),
		}, Frequency{}},
		{"refused and failed applies are no deployments", []audit.Record{refused,
			func() audit.Record {
				r := apply("dev-8", "dev", "c8", time.Hour, api)
				r.Outcome = audit.OutcomeFailed
				return r
			}(),
		}, Frequency{}},
		{"an auto-sync run's own record is no second deployment", []audit.Record{
			apply("dev-1", "dev", "c1", 3*time.Hour, api),
			{ID: "as-1", Time: now.Add(-3 * time.Hour), Verb: audit.VerbAutoSync, Cluster: "c1", Environment: "dev", Commit: "c1", Outcome: audit.OutcomeSucceeded},
		}, Frequency{Deployments: 1, PerDay: 0.14}},
		{"a direct rollback of an App outside environments", []audit.Record{
			{ID: "app-1", Time: now.Add(-time.Hour), Verb: audit.VerbRollback, Cluster: "c1", Namespace: "tools", App: "cron", Outcome: audit.OutcomeSucceeded},
		}, Frequency{Deployments: 1, PerDay: 0.14}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Compute(input(tc.recs, nil)).DeploymentFrequency
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DeploymentFrequency mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeploymentFrequencyPerApp(t *testing.T) {
	rep := Compute(input([]audit.Record{
		apply("dev-1", "dev", "c1", 72*time.Hour, api, worker),
		apply("dev-2", "dev", "c2", 48*time.Hour, api),
		apply("stg-1", "staging", "c7", 24*time.Hour, stgAPI),
	}, nil))
	got := map[string]int{}
	for _, r := range rep.Rows {
		got[r.Environment+"/"+r.App] = r.DeploymentFrequency.Deployments
	}
	want := map[string]int{"dev/": 2, "dev/api": 2, "dev/worker": 1, "staging/": 1, "staging/api": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deployments per row mismatch (-want +got):\n%s", diff)
	}
	if rep.DeploymentFrequency.Deployments != 3 {
		t.Errorf("Deployments = %d, want 3 (each environment's apply once)", rep.DeploymentFrequency.Deployments)
	}
}

func TestLeadTime(t *testing.T) {
	promote := audit.Record{ID: "p-1", Time: now.Add(-5 * time.Hour), Verb: audit.VerbPromote, Cluster: "c1", Environment: "staging",
		Commit: "c7", Outcome: audit.OutcomeSucceeded}
	for _, tc := range []struct {
		name string
		recs []audit.Record
		want Durations
	}{
		{"no applies", nil, Durations{}},
		{"from the promotion's commit to the end of its apply", []audit.Record{promote,
			apply("stg-1", "staging", "c7", 2*time.Hour, stgAPI)}, Durations{Count: 1, MedianSeconds: 3*3600 + 60, P90Seconds: 3*3600 + 60}},
		{"a commit first seen at its apply: the apply's duration", []audit.Record{
			apply("dev-1", "dev", "c1", 2*time.Hour, api)}, Durations{Count: 1, MedianSeconds: 60, P90Seconds: 60}},
		{"from its first apply in another environment", []audit.Record{
			apply("dev-1", "dev", "c1", 26*time.Hour, api),
			apply("stg-1", "staging", "c1", 2*time.Hour, stgAPI)}, Durations{Count: 2, MedianSeconds: (60 + 24*3600 + 60) / 2, P90Seconds: 24*3600 + 60}},
		{"first seen before the window", []audit.Record{promote,
			func() audit.Record { r := promote; r.ID, r.Time = "p-0", now.Add(-8*24*time.Hour); return r }(),
			apply("stg-1", "staging", "c7", 2*time.Hour, stgAPI)}, Durations{Count: 1, MedianSeconds: 8*24*3600 - 2*3600 + 60, P90Seconds: 8*24*3600 - 2*3600 + 60}},
		{"no commit, no lead time", []audit.Record{
			apply("dev-1", "dev", "", 2*time.Hour, api)}, Durations{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Compute(input(tc.recs, nil)).LeadTime
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LeadTime mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChangeFailureRate(t *testing.T) {
	deploy := apply("dev-1", "dev", "c1", 3*time.Hour, api, worker) // ends 2h59m ago
	rollback := audit.Record{ID: "dev-rb", Time: now.Add(-150 * time.Minute), Verb: audit.VerbRollback, Cluster: "c1", Environment: "dev",
		Commit: "c0", Outcome: audit.OutcomeSucceeded}
	refusedPromotion := func(app string, gate promotion.GateID) audit.Record {
		return audit.Record{ID: "p-1", Time: now.Add(-150 * time.Minute), Verb: audit.VerbPromote, Cluster: "c1", Environment: "staging",
			Outcome: audit.OutcomeRefused, Blockers: []string{promotion.GateBlocker(gate, app)}}
	}
	for _, tc := range []struct {
		name    string
		recs    []audit.Record
		entries []timeline.Entry
		want    FailureRate
		// failedApps are the Apps whose rows count a failure.
		failedApps []string
	}{
		{"no applies", nil, nil, FailureRate{}, nil},
		{"healthy after", []audit.Record{deploy}, []timeline.Entry{health(api, "Progressing", "Healthy", 170*time.Minute)},
			FailureRate{Deployments: 1}, nil},
		{"Degraded within the hour", []audit.Record{deploy}, []timeline.Entry{health(api, "Healthy", "Degraded", 130*time.Minute)},
			FailureRate{Deployments: 1, Failures: 1, Rate: 1}, []string{"api"}},
		{"Degraded after the hour", []audit.Record{deploy}, []timeline.Entry{health(api, "Healthy", "Degraded", 118*time.Minute)},
			FailureRate{Deployments: 1}, nil},
		{"a rollback of the environment", []audit.Record{deploy, rollback}, nil,
			FailureRate{Deployments: 1, Failures: 1, Rate: 1}, []string{"api", "worker"}},
		{"a refused rollback changed nothing", []audit.Record{deploy, func() audit.Record { r := rollback; r.Outcome = audit.OutcomeRefused; return r }()}, nil,
			FailureRate{Deployments: 1}, nil},
		{"a failed promotion check out of the environment", []audit.Record{deploy, refusedPromotion("worker", promotion.GateChecks)}, nil,
			FailureRate{Deployments: 1, Failures: 1, Rate: 1}, []string{"worker"}},
		{"a promotion refused by another gate", []audit.Record{deploy, refusedPromotion("worker", promotion.GateNotFrozen)}, nil,
			FailureRate{Deployments: 1}, nil},
		{"one of two deployments", []audit.Record{deploy, apply("dev-2", "dev", "c2", 30*time.Hour, api)},
			[]timeline.Entry{health(api, "Healthy", "Degraded", 130*time.Minute)},
			FailureRate{Deployments: 2, Failures: 1, Rate: 0.5}, []string{"api"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Compute(input(tc.recs, tc.entries))
			if diff := cmp.Diff(tc.want, rep.ChangeFailureRate); diff != "" {
				t.Errorf("ChangeFailureRate mismatch (-want +got):\n%s", diff)
			}
			var failed []string
			for _, r := range rep.Rows {
				if r.App != "" && r.ChangeFailureRate.Failures > 0 {
					failed = append(failed, r.App)
				}
			}
			if diff := cmp.Diff(tc.failedApps, failed); diff != "" {
				t.Errorf("failed Apps mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimeToRestore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []timeline.Entry
		want    Restore
	}{
		{"nothing degraded", []timeline.Entry{health(api, "Progressing", "Healthy", time.Hour)}, Restore{}},
		{"restored after 30 minutes", []timeline.Entry{
			health(api, "Healthy", "Degraded", 2*time.Hour), health(api, "Degraded", "Healthy", 90*time.Minute)},
			Restore{Durations: Durations{Count: 1, MedianSeconds: 1800, P90Seconds: 1800}}},
		{"through Progressing to Healthy", []timeline.Entry{
			health(api, "Healthy", "Degraded", 2*time.Hour), health(api, "Degraded", "Progressing", 100*time.Minute),
			health(api, "Progressing", "Degraded", 95*time.Minute), health(api, "Degraded", "Healthy", time.Hour)},
			Restore{Durations: Durations{Count: 1, MedianSeconds: 3600, P90Seconds: 3600}}},
		{"Degraded never restored", []timeline.Entry{health(worker, "Healthy", "Degraded", 3*time.Hour)}, Restore{Unrestored: 1}},
		{"an episode begun before the window is not the window's", []timeline.Entry{
			health(api, "Healthy", "Degraded", 8*24*time.Hour), health(api, "Degraded", "Healthy", 6*24*time.Hour)}, Restore{}},
		{"two Apps", []timeline.Entry{
			health(api, "Healthy", "Degraded", 3*time.Hour), health(api, "Degraded", "Healthy", 2*time.Hour),
			health(worker, "Healthy", "Degraded", 3*time.Hour), health(worker, "Degraded", "Healthy", 170*time.Minute),
			health(stgAPI, "Healthy", "Degraded", time.Hour)},
			Restore{Durations: Durations{Count: 2, MedianSeconds: (3600 + 600) / 2, P90Seconds: 3600}, Unrestored: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Compute(input(nil, tc.entries)).TimeToRestore
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TimeToRestore mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWindowBoundary: a deployment counts in the window its end falls
// in, [since, until); an episode by its start.
func TestWindowBoundary(t *testing.T) {
	w := Window7d.Duration()
	atSince := apply("dev-1", "dev", "c1", w+time.Minute, api) // ends exactly at since
	beforeSince := apply("dev-0", "dev", "c0", w+2*time.Minute, api)
	beforeSince.Duration = audit.Duration(time.Minute - time.Millisecond)
	rep := Compute(input([]audit.Record{beforeSince, atSince}, []timeline.Entry{
		health(api, "Healthy", "Degraded", w), health(worker, "Healthy", "Degraded", w+time.Millisecond)}))
	if got := rep.DeploymentFrequency.Deployments; got != 1 {
		t.Errorf("Deployments = %d, want 1 (the one that ended at since)", got)
	}
	if got := rep.TimeToRestore.Unrestored; got != 1 {
		t.Errorf("Unrestored = %d, want 1 (the episode that began at since)", got)
	}
	if got, want := len(rep.Buckets), 7; got != want {
		t.Fatalf("len(Buckets) = %d, want %d", got, want)
	}
	if got := rep.Buckets[0].DeploymentFrequency.Deployments; got != 1 {
		t.Errorf("Buckets[0] deployments = %d, want 1", got)
	}
	if !rep.Buckets[0].Start.Equal(rep.Since) || !rep.Buckets[6].End.Equal(rep.Until) {
		t.Errorf("buckets span %v to %v, want %v to %v", rep.Buckets[0].Start, rep.Buckets[6].End, rep.Since, rep.Until)
	}
	if got := len(Compute(Input{Now: now, Window: Window90d}).Buckets); got != 15 {
		t.Errorf("90d buckets = %d, want 15", got)
	}
}

func TestSelection(t *testing.T) {
	recs := []audit.Record{
		apply("dev-1", "dev", "c1", 72*time.Hour, api, worker),
		apply("stg-1", "staging", "c7", 24*time.Hour, stgAPI),
	}
	entries := []timeline.Entry{health(worker, "Healthy", "Degraded", time.Hour), health(stgAPI, "Healthy", "Degraded", time.Hour)}
	for _, tc := range []struct {
		name        string
		in          func(*Input)
		deployments int
		episodes    int
		rows        []string
	}{
		{"all", func(*Input) {}, 2, 2, []string{"dev/", "dev/api", "dev/worker", "staging/", "staging/api"}},
		{"one environment", func(in *Input) { in.Environment = "staging" }, 1, 1, []string{"staging/", "staging/api"}},
		{"one App", func(in *Input) { in.App = "worker" }, 1, 1, []string{"dev/", "dev/worker"}},
		{"only what the reader may see", func(in *Input) { in.Visible = func(a timeline.App) bool { return a.Namespace == "staging" } },
			1, 1, []string{"staging/", "staging/api"}},
		{"an App no record names", func(in *Input) { in.App = "nope" }, 0, 0, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := input(recs, entries)
			tc.in(&in)
			rep := Compute(in)
			if got := rep.DeploymentFrequency.Deployments; got != tc.deployments {
				t.Errorf("Deployments = %d, want %d", got, tc.deployments)
			}
			if got := rep.TimeToRestore.Unrestored; got != tc.episodes {
				t.Errorf("Unrestored = %d, want %d", got, tc.episodes)
			}
			rows := []string{}
			for _, r := range rep.Rows {
				rows = append(rows, r.Environment+"/"+r.App)
			}
			if diff := cmp.Diff(tc.rows, rows); diff != "" {
				t.Errorf("rows mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseWindow(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Window
		bad  bool
	}{
		{"", Window30d, false}, {"7d", Window7d, false}, {"30d", Window30d, false}, {"90d", Window90d, false},
		{"1d", "", true}, {"30D", "", true}, {"30", "", true}, {" 7d", "", true}, {"365d", "", true}, {"<script>", "", true},
	} {
		got, err := ParseWindow(tc.in)
		var qe *QueryError
		if tc.bad {
			if !errors.As(err, &qe) || qe.Field != "since" {
				t.Errorf("ParseWindow(%q) = %v, %v, want a *QueryError of since", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseWindow(%q) = %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
}
