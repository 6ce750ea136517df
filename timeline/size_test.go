package timeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// The size model: each App has ModelPerDay entries a day (a deploy, health
// Healthy->Progressing->Healthy, sync Synced->OutOfSync->Synced, two
// restarts, a Warning, drift appearing and clearing), at random times, with
// the names, ids and messages a real fleet has.
const ModelPerDay = 10

// modelLogs returns the logs of apps Apps over days days, ending at end.
func modelLogs(apps, days int, end time.Time) []*appLog {
	r := rand.New(rand.NewPCG(31, 2026))
	lim := Limits{}.withDefaults()
	logs := make([]*appLog, 0, apps)
	for a := range apps {
		app := App{Cluster: "prod-eu-1", Namespace: fmt.Sprintf("team-%02d", a%40), Name: fmt.Sprintf("service-%05d", a)}
		var all []Entry
		for d := range days {
			day := end.Add(-time.Duration(days-d) * 24 * time.Hour)
			at := func() time.Time { return day.Add(time.Duration(r.Int64N(int64(24 * time.Hour)))) }
			pod := fmt.Sprintf("%s-%08x-%05x", app.Name, r.Uint32(), r.Uint32()&0xfffff)
			rev := fmt.Sprintf("1.%d.%d", d/7, d%7)
			deploy := at()
			es := []Entry{
				{Time: deploy, Kind: KindDeploy, To: rev, Revision: rev, Ref: "deploy-web-apply-" + deploy.Format("20060102-150405") + fmt.Sprintf("-%06x", r.Uint32()&0xffffff)},
				{Time: deploy.Add(time.Second), Kind: KindHealth, From: "Healthy", To: "Progressing", Message: "Waiting for rollout to finish: 1 of 3 updated replicas are available...", Revision: rev},
				{Time: deploy.Add(40 * time.Second), Kind: KindHealth, From: "Progressing", To: "Healthy", Revision: rev},
				{Time: deploy.Add(-time.Minute), Kind: KindSync, From: "Synced", To: "OutOfSync", Message: "declared " + rev + ", running " + fmt.Sprintf("1.%d.%d", d/7, max(0, d%7-1)), Revision: rev},
				{Time: deploy.Add(45 * time.Second), Kind: KindSync, From: "OutOfSync", To: "Synced", Revision: rev},
				{Time: at(), Kind: KindRestart, From: "0", To: "1", Ref: pod + "/app", Message: "last termination: Error", Revision: rev},
				{Time: at(), Kind: KindRestart, From: "1", To: "2", Ref: pod + "/app", Message: "last termination: Error", Revision: rev},
				{Time: at(), Kind: KindWarning, Ref: "core:Pod:" + app.Namespace + ":" + pod, Message: "Readiness probe failed: HTTP probe failed with statuscode: 503", Revision: rev},
				{Time: at(), Kind: KindDrift, From: DriftClean, To: DriftDrifted, Revision: rev},
				{Time: at(), Kind: KindDrift, From: DriftDrifted, To: DriftClean, Revision: rev},
			}
			all = append(all, es...)
		}
		l := &appLog{app: app}
		l.merge(logOf(app, all...).entries, lim, end) // sorts and trims
		logs = append(logs, l)
	}
	return logs
}

// storedBytes shards the logs as the store does and returns the total
// and largest shard sizes.
func storedBytes(tb testing.TB, logs []*appLog, shards int) (total, largest int) {
	tb.Helper()
	for _, data := range encodeAll(tb, logs, shards) {
		total += len(data)
		largest = max(largest, len(data))
	}
	return total, largest
}

// TestStorageModel checks the budget on a sample: 1,000 Apps for 3 days
// at ModelPerDay, in the default shards, extrapolated to 10,000 Apps over
// 30 days, is under 200 MiB (and the shards of that fleet under
// MaxShardBytes). BenchmarkStorage measures the full size.
func TestStorageModel(t *testing.T) {
	end := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	logs := modelLogs(1000, 3, end)
	// 1,000 Apps fill 1,000/10,000 of each of the 256 shards: encode them
	// in 26 shards (the same Apps per shard as 10,000 Apps in 256).
	total, _ := storedBytes(t, logs, DefaultShards/10)
	perAppDay := float64(total) / 1000 / 3
	full := perAppDay * 10_000 * 30
	t.Logf("%.1f bytes per App per day (%.0f KiB per 1,000 Apps per day); 10,000 Apps x 30 days = %.1f MiB, %.0f KiB per shard",
		perAppDay, perAppDay*1000/1024, full/(1<<20), full/DefaultShards/1024)
	if full > 200<<20 {
		t.Errorf("10,000 Apps x 30 days extrapolated to %.1f MiB, want under 200 MiB", full/(1<<20))
	}
	if full/DefaultShards > MaxShardBytes {
		t.Errorf("a shard of 10,000 Apps x 30 days extrapolated to %.0f KiB, want under %d KiB", full/DefaultShards/1024, MaxShardBytes>>10)
	}
}

// BenchmarkStorage measures the stored bytes of the model: per 1,000 Apps
// per day, and of 10,000 Apps over 30 days in the default 256 shards, with
// the memory the index holds for them. Run with -benchtime 1x.
func BenchmarkStorage(b *testing.B) {
	end := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	b.Run("1000apps-1day", func(b *testing.B) {
		for b.Loop() {
			total, _ := storedBytes(b, modelLogs(1000, 1, end), DefaultShards)
			b.ReportMetric(float64(total)/1024, "KiB/1000apps/day")
		}
	})
	b.Run("10000apps-30days", func(b *testing.B) {
		for b.Loop() {
			logs := modelLogs(10_000, 30, end)
			total, largest := storedBytes(b, logs, DefaultShards)
			entries := 0
			for _, l := range logs {
				entries += len(l.entries)
			}
			b.ReportMetric(float64(total)/(1<<20), "MiB-stored")
			b.ReportMetric(float64(largest)/1024, "KiB-largest-shard")
			b.ReportMetric(float64(total)/float64(entries), "bytes/entry")
			// What a started store holds: the shards decoded.
			shards := encodeAll(b, logs, DefaultShards)
			logs = nil
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			var held [][]*appLog
			for i, data := range shards {
				l, _, err := decodeShard(ShardName(i), data)
				if err != nil {
					b.Fatal(err)
				}
				held = append(held, l)
			}
			load := time.Since(start)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-index-heap")
			b.ReportMetric(load.Seconds(), "s-load")
			runtime.KeepAlive(held)
		}
	})
}

// encodeAll returns the encoded shards of the logs.
func encodeAll(tb testing.TB, logs []*appLog, shards int) [][]byte {
	tb.Helper()
	by := make([][]*appLog, shards)
	for _, l := range logs {
		i := shardOf(l.app, shards)
		by[i] = append(by[i], l)
	}
	out := make([][]byte, shards)
	for i, s := range by {
		sortLogs(s)
		data, err := encodeShard(s)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = data
	}
	return out
}

// BenchmarkFlushEncode is the writer's work per write: one shard of the
// 10,000 Apps x 30 days model (39 Apps, ~11,700 entries) encoded.
func BenchmarkFlushEncode(b *testing.B) {
	logs := modelLogs(40, 30, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	for b.Loop() {
		data, err := encodeShard(logs)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
	}
}

// BenchmarkFleet pages the feed of 2,000 Apps over 30 days of the model
// (600,000 entries): the first page of all, of one namespace, of one kind.
func BenchmarkFleet(b *testing.B) {
	kube, _ := newFakeKube()
	end := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s, err := New(kube.CoreV1(), Options{Namespace: "deploy-web", Now: func() time.Time { return end }})
	if err != nil {
		b.Fatal(err)
	}
	close(s.ready)
	for _, l := range modelLogs(2000, 30, end) {
		s.logs[l.app] = l
		s.shards[shardOf(l.app, s.opts.Shards)][l.app] = l
	}
	for _, bc := range []struct {
		name string
		f    Filter
	}{
		{"all", Filter{}},
		{"namespace", Filter{Namespace: "team-07"}},
		{"kind-deploy", Filter{Kinds: []Kind{KindDeploy}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := s.Fleet(context.Background(), bc.f)
				if err != nil || len(p.Entries) != DefaultLimit {
					b.Fatalf("Fleet() = %d entries, %v; want a full page", len(p.Entries), err)
				}
			}
		})
	}
}
