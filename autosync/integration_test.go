package autosync

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

// TestOnControlPlane runs two replicas' loops against the real control
// plane's Lease: each new head is deployed exactly once, by the replica
// holding the Lease; after it stops, the other takes over. A pause
// written through one replica's store stops the other's loop.
func TestOnControlPlane(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{testNS}})
	client := func() kubernetes.Interface {
		return kubernetes.NewForConfigOrDie(platformtest.AdminConfig(p.Cluster.Config))
	}
	ctx := context.Background()
	w := newWorld()
	w.heads["dev"] = "h1"
	env := Environment{Name: "dev", Enabled: true, Interval: time.Minute}
	k1, k2 := client(), client()
	p1, p2 := NewPauses(k1.CoreV1(), testNS, signtest.Keys(), nil), NewPauses(k2.CoreV1(), testNS, signtest.Keys(), nil)
	r1, stop1 := startLoop(t, k1, w, "replica-1", realClock{}, p1, env)
	r2, stop2 := startLoop(t, k2, w, "replica-2", realClock{}, p2, env)
	waitFor(t, "a leader", func() bool { return r1.Leading() || r2.Leading() })
	if r1.Leading() && r2.Leading() {
		t.Fatal("both replicas lead")
	}
	leader, follower, stopLeader, leaderID, followerID := r1, r2, stop1, "replica-1", "replica-2"
	if r2.Leading() {
		leader, follower, stopLeader, leaderID, followerID = r2, r1, stop2, "replica-2", "replica-1"
	}
	// byReplica counts the Deploy calls of each head, by replica.
	byReplica := func() map[string]map[string]int {
		out := map[string]map[string]int{}
		for _, c := range w.calls() {
			if out[c.Req.Commit] == nil {
				out[c.Req.Commit] = map[string]int{}
			}
			out[c.Req.Commit][c.Identity]++
		}
		return out
	}
	deployedOnce := func(head, by string) {
		t.Helper()
		waitFor(t, head+" deployed", func() bool { return len(byReplica()[head]) > 0 })
		// Both replicas hear of every push; the leader checks dev once
		// more (an explicit signal), and the other, if it (wrongly) would
		// act, had the same wake.
		lead := r1
		if r2.Leading() {
			lead = r2
		}
		before := nextCheck(t, lead)
		r1.Wake("dev")
		r2.Wake("dev")
		waitFor(t, "the leader's next check of dev", func() bool { return !nextCheck(t, lead).Equal(before) })
		if got := byReplica()[head]; len(got) != 1 || got[by] != 1 {
			t.Fatalf("Deploy calls of %s by replica = %v, want exactly one, by %s", head, got, by)
		}
	}
	deployedOnce("h1", leaderID)
	w.set(func(w *world) { w.heads["dev"] = "h2" })
	r1.Wake("dev")
	r2.Wake("dev")
	deployedOnce("h2", leaderID)

	// A pause through the leader's store stops the follower once it leads.
	if _, err := p1.Pause(ctx, "dev", "handover drill", time.Now().Add(time.Hour), "ada"); err != nil {
		t.Fatal(err)
	}
	stopLeader()
	if leader.Leading() {
		t.Fatal("a stopped replica still leads")
	}
	w.set(func(w *world) { w.heads["dev"] = "h3" })
	waitFor(t, "the other replica to take over", follower.Leading)
	before := nextCheck(t, follower)
	follower.Wake("dev")
	waitFor(t, "the new leader's next check of dev", func() bool { return !nextCheck(t, follower).Equal(before) })
	if got := byReplica()["h3"]; len(got) != 0 {
		t.Fatalf("Deploy calls of h3 while paused = %v, want none", got)
	}
	st, err := follower.Status(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Paused || st.PauseReason != "handover drill" || st.PausedBy != "ada" {
		t.Errorf("follower Status() = %+v, want paused by ada for the handover drill", st)
	}
	if _, err := p2.Resume(ctx, "dev", "bob"); err != nil {
		t.Fatal(err)
	}
	follower.Wake("dev")
	deployedOnce("h3", followerID)
}

// nextCheck is when l checks dev next (zero while it does not lead): it
// moves once l has checked dev.
func nextCheck(t *testing.T, l *Loop) time.Time {
	t.Helper()
	st, err := l.Status(context.Background(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	return st.NextCheck
}
