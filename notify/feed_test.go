package notify

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/timeline"
)

// TestTimelineFeed: each sequence of timeline entries of one App gives
// these events, in order.
func TestTimelineFeed(t *testing.T) {
	health := func(from, to string) timeline.Entry {
		return timeline.Entry{Kind: timeline.KindHealth, From: from, To: to}
	}
	tests := []struct {
		name    string
		entries []timeline.Entry
		want    []TriggerType
	}{
		{"degraded then healthy", []timeline.Entry{health("Progressing", "Degraded"), health("Degraded", "Healthy")},
			[]TriggerType{TriggerDegraded, TriggerRecovered}},
		{"recovery through progressing", []timeline.Entry{health("Healthy", "Degraded"), health("Degraded", "Progressing"), health("Progressing", "Healthy")},
			[]TriggerType{TriggerDegraded, triggerSettled, TriggerRecovered}},
		{"a rollout is no recovery", []timeline.Entry{health("Healthy", "Progressing"), health("Progressing", "Healthy")}, nil},
		{"degraded to healthy unseen (after a restart)", []timeline.Entry{health("Degraded", "Healthy")}, []TriggerType{TriggerRecovered}},
		{"one recovery per degradation", []timeline.Entry{health("Healthy", "Degraded"), health("Degraded", "Healthy"),
			health("Healthy", "Progressing"), health("Progressing", "Healthy")}, []TriggerType{TriggerDegraded, TriggerRecovered}},
		{"drift appears, clears", []timeline.Entry{{Kind: timeline.KindDrift, From: timeline.DriftClean, To: timeline.DriftDrifted},
			{Kind: timeline.KindDrift, From: timeline.DriftDrifted, To: timeline.DriftClean}}, []TriggerType{TriggerDrift}},
		{"other kinds", []timeline.Entry{{Kind: timeline.KindRestart, From: "0", To: "1"}, {Kind: timeline.KindSync, From: "Synced", To: "OutOfSync"},
			{Kind: timeline.KindDeploy}, {Kind: timeline.KindCrashLoop, To: timeline.ReasonCrashLoopBackOff}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f TimelineFeed
			var got []TriggerType
			for _, e := range tt.entries {
				e.App = timeline.App{Cluster: "c1", Namespace: "shop", Name: "checkout"}
				for _, ev := range f.Events(e) {
					got = append(got, ev.Trigger)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Events(%v) = %v, want %v", tt.entries, got, tt.want)
			}
		})
	}
}

// TestTimelineFeedEvent: the event carries the App, its environment and
// link, the revision (deduplication) and the entry's text as data.
func TestTimelineFeedEvent(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	f := TimelineFeed{
		EnvironmentOf: func(cluster, ns string) string { return map[string]string{"c1/shop": "prod"}[cluster+"/"+ns] },
		Link: func(cluster, ns, app string) string {
			return "https://deploy.example/" + cluster + "/" + ns + "/" + app
		},
	}
	e := timeline.Entry{Time: at, App: timeline.App{Cluster: "c1", Namespace: "shop", Name: "checkout"}, Kind: timeline.KindHealth,
		From: "Progressing", To: "Degraded", Message: "<script>x</script> Back-off restarting", Revision: "v1.2.3"}
	want := []Event{{Trigger: TriggerDegraded, App: "checkout", Cluster: "c1", Namespace: "shop", Environment: "prod",
		Revision: "v1.2.3", From: "Progressing", To: "Degraded", Message: "<script>x</script> Back-off restarting",
		Link: "https://deploy.example/c1/shop/checkout", Time: at}}
	if diff := cmp.Diff(want, f.Events(e)); diff != "" {
		t.Errorf("Events() mismatch (-want +got):\n%s", diff)
	}
	// An entry without a cluster (a single-cluster console) is of the
	// feed's.
	f.Cluster = "home"
	noCluster := e
	noCluster.App.Cluster = ""
	if got := f.Events(noCluster); len(got) != 1 || got[0].Cluster != "home" {
		t.Errorf("Events(entry without a cluster) = %+v, want one event of cluster home", got)
	}
	// Another App's degradation does not make this one's rollout a recovery.
	other := timeline.Entry{App: timeline.App{Cluster: "c1", Namespace: "shop", Name: "cart"}, Kind: timeline.KindHealth, From: "Progressing", To: "Healthy"}
	if got := f.Events(other); len(got) != 0 {
		t.Errorf("Events(cart Progressing->Healthy) = %v, want none (only checkout was degraded)", got)
	}
}
