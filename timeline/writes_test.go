package timeline

import (
	"context"
	"testing"
	"time"
)

// BenchmarkWritesAtRest models the bench-cluster fleet at rest (2,000
// Apps, 70 of them crash-looping: a restart every 5 minutes, their BackOff
// Warning updated every 30 seconds, each App at its own offset) for an
// hour of a fake clock, the writer ticking every second, and reports the
// shard writes per second (writes/s) the loops cost and those of the
// hour's last 15 minutes (writes/s-steady), once every episode is under
// way.
func BenchmarkWritesAtRest(b *testing.B) {
	const apps, looping = 2000, 70
	const hour = time.Hour
	for range b.N {
		kube, wc := newFakeKube()
		clock := &fakeClock{t: t0}
		s, err := New(kube.CoreV1(), Options{Namespace: "deploy-web", Now: clock.Now, IsLeader: func() bool { return true }})
		if err != nil {
			b.Fatal(err)
		}
		close(s.ready)
		state := func(restarts int32) State {
			return State{Health: "Degraded", Sync: "Synced", Revision: "1.0.0",
				Containers: []Container{{Pod: "pod-1", Name: "app", Restarts: restarts, LastTermination: "Error"}}}
		}
		for a := range apps {
			s.Observe(appN(a), state(0))
		}
		restarts := make([]int32, looping)
		steadyFrom := 0
		for sec := 1; sec <= int(hour/time.Second); sec++ {
			clock.Add(time.Second)
			for a := range looping {
				at := sec + a*7 // each App at its own offset
				if at%300 == 0 {
					restarts[a]++
					s.Observe(appN(a), state(restarts[a]))
				}
				if at%30 == 0 {
					s.Record(Entry{Time: clock.Now(), App: appN(a), Kind: KindWarning, Ref: "core:Pod:x:pod-1",
						Message: "BackOff: Back-off restarting failed container app in pod pod-1"})
				}
			}
			s.flush(context.Background())
			if sec == int((hour-DefaultFoldWrite)/time.Second) {
				steadyFrom = wc.n()
			}
		}
		b.ReportMetric(float64(wc.n())/hour.Seconds(), "writes/s")
		b.ReportMetric(float64(wc.n()-steadyFrom)/DefaultFoldWrite.Seconds(), "writes/s-steady")
	}
}
