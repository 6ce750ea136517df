package timeline

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	testApp = App{Namespace: "shop", Name: "checkout"}
	t0      = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
)

func TestTransitions(t *testing.T) {
	healthy := State{Health: "Healthy", Sync: "Synced", Revision: "1.2.0",
		Containers: []Container{{Pod: "checkout-a", Name: "app", Restarts: 2}}}
	with := func(f func(*State)) State {
		s := healthy
		s.Containers = append([]Container(nil), healthy.Containers...)
		f(&s)
		return s
	}
	entry := func(k Kind, from, to, msg, ref string) Entry {
		return Entry{Time: t0, App: testApp, Kind: k, From: from, To: to, Message: msg, Ref: ref, Revision: "1.2.0", Count: 1}
	}
	tests := []struct {
		name      string
		prev, cur State
		want      []Entry
	}{
		{"no change", healthy, healthy, nil},
		{"deploy: the declared revision changes", healthy, with(func(s *State) { s.Revision = "1.3.0" }),
			[]Entry{{Time: t0, App: testApp, Kind: KindDeploy, From: "1.2.0", To: "1.3.0", Message: "declared 1.3.0", Revision: "1.3.0", Count: 1}}},
		{"no deploy from an unknown revision", with(func(s *State) { s.Revision = "" }), healthy, nil},
		{"degraded", healthy, with(func(s *State) { s.Health, s.HealthMessage = "Degraded", "Deployment exceeded its progress deadline" }),
			[]Entry{entry(KindHealth, "Healthy", "Degraded", "Deployment exceeded its progress deadline", "")}},
		{"out of sync", healthy, with(func(s *State) { s.Sync, s.SyncMessage = "OutOfSync", "image 1.3.0 declared" }),
			[]Entry{entry(KindSync, "Synced", "OutOfSync", "image 1.3.0 declared", "")}},
		{"drift appears", healthy, with(func(s *State) { s.Drifted = true }),
			[]Entry{entry(KindDrift, DriftClean, DriftDrifted, "", "")}},
		{"drift clears", with(func(s *State) { s.Drifted = true }), healthy,
			[]Entry{entry(KindDrift, DriftDrifted, DriftClean, "", "")}},
		{"restart after OOM kill", healthy, with(func(s *State) { s.Containers[0].Restarts, s.Containers[0].LastTermination = 3, ReasonOOMKilled }),
			[]Entry{entry(KindRestart, "2", "3", "last termination: OOMKilled", "checkout-a/app"), entry(KindOOM, "", ReasonOOMKilled, "", "checkout-a/app")}},
		{"still OOMKilled, no new restart",
			with(func(s *State) { s.Containers[0].LastTermination = ReasonOOMKilled }),
			with(func(s *State) { s.Containers[0].LastTermination = ReasonOOMKilled }), nil},
		{"OOM killed again",
			with(func(s *State) { s.Containers[0].LastTermination = ReasonOOMKilled }),
			with(func(s *State) { s.Containers[0].Restarts, s.Containers[0].LastTermination = 4, ReasonOOMKilled }),
			[]Entry{entry(KindRestart, "2", "4", "last termination: OOMKilled", "checkout-a/app"), entry(KindOOM, "", ReasonOOMKilled, "", "checkout-a/app")}},
		{"crash loop starts", healthy, with(func(s *State) { s.Containers[0].Waiting = ReasonCrashLoopBackOff }),
			[]Entry{entry(KindCrashLoop, "", ReasonCrashLoopBackOff, "", "checkout-a/app")}},
		{"crash loop goes on",
			with(func(s *State) { s.Containers[0].Waiting = ReasonCrashLoopBackOff }),
			with(func(s *State) { s.Containers[0].Waiting = ReasonCrashLoopBackOff }), nil},
		{"new pod is not a restart", healthy, with(func(s *State) { s.Containers = []Container{{Pod: "checkout-b", Name: "app"}} }), nil},
		{"new pod that restarted already", healthy,
			with(func(s *State) {
				s.Containers = append(s.Containers, Container{Pod: "checkout-b", Name: "app", Restarts: 1})
			}),
			[]Entry{entry(KindRestart, "0", "1", "", "checkout-b/app")}},
		{"containers in pod, name order", healthy,
			with(func(s *State) {
				s.Containers = []Container{{Pod: "checkout-b", Name: "side", Restarts: 1}, {Pod: "checkout-b", Name: "app", Restarts: 1}, {Pod: "checkout-a", Name: "app", Restarts: 3}}
			}),
			[]Entry{entry(KindRestart, "2", "3", "", "checkout-a/app"), entry(KindRestart, "0", "1", "", "checkout-b/app"), entry(KindRestart, "0", "1", "", "checkout-b/side")}},
		{"health then sync then drift", healthy,
			with(func(s *State) { s.Health, s.Sync, s.Drifted = "Progressing", "OutOfSync", true }),
			[]Entry{entry(KindHealth, "Healthy", "Progressing", "", ""), entry(KindSync, "Synced", "OutOfSync", "", ""), entry(KindDrift, DriftClean, DriftDrifted, "", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Transitions(testApp, tt.prev, tt.cur, t0)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Transitions() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTransitionsHostileMessage: text from the cluster stays data, only
// made valid UTF-8 and cut to its cap.
func TestTransitionsHostileMessage(t *testing.T) {
	msg := "<script>alert(1)</script>\x00\"},{\"kind\":\"deploy\"\n\u2028\xff" + strings.Repeat("é", MaxMessageBytes)
	got := Transitions(testApp, State{Health: "Healthy"}, State{Health: "Degraded", HealthMessage: msg}, t0)
	if len(got) != 1 {
		t.Fatalf("Transitions() = %d entries, want 1", len(got))
	}
	m := got[0].Message
	if want := "<script>alert(1)</script>\x00\"},{\"kind\":\"deploy\"\n\u2028\uFFFD"; !strings.HasPrefix(m, want) {
		t.Errorf("Message = %q, want prefix %q", m[:min(len(m), 60)], want)
	}
	if len(m) > MaxMessageBytes || !strings.HasSuffix(m, "é") {
		t.Errorf("Message has %d bytes ending %q, want at most %d ending on a whole rune", len(m), m[len(m)-2:], MaxMessageBytes)
	}
}

func TestContainersOf(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "checkout-7d9f-x2k4p"}, Status: corev1.PodStatus{
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", RestartCount: 1,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error"}}}},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", RestartCount: 4,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonCrashLoopBackOff}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: ReasonOOMKilled}}},
			{Name: "proxy", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		},
	}}
	want := []Container{
		{Pod: "checkout-7d9f-x2k4p", Name: "init:migrate", Restarts: 1, LastTermination: "Error"},
		{Pod: "checkout-7d9f-x2k4p", Name: "app", Restarts: 4, LastTermination: ReasonOOMKilled, Waiting: ReasonCrashLoopBackOff},
		{Pod: "checkout-7d9f-x2k4p", Name: "proxy"},
	}
	if diff := cmp.Diff(want, ContainersOf([]*corev1.Pod{pod})); diff != "" {
		t.Errorf("ContainersOf() (-want +got):\n%s", diff)
	}
	many := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: make([]corev1.ContainerStatus, MaxContainers+5)}}
	if got := len(ContainersOf([]*corev1.Pod{many})); got != MaxContainers {
		t.Errorf("ContainersOf(%d containers) = %d, want %d", MaxContainers+5, got, MaxContainers)
	}
}
