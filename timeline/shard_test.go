package timeline

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// hostile is text from the cluster that must come back as it went in.
const hostile = "<script>alert(1)</script>\x00\"],\"k\":[\"deploy\"]}\n\u2028{{.}}'; DROP TABLE x"

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// logOf returns a log of the entries, normalized, in the order given.
func logOf(app App, es ...Entry) *appLog {
	l := &appLog{app: app}
	for _, e := range es {
		e.App = app
		e = e.normalize()
		l.entries = append(l.entries, recOf(&e))
	}
	return l
}

func TestShardRoundTrip(t *testing.T) {
	other := App{Cluster: "eu", Namespace: "shop", Name: hostile}
	in := []*appLog{
		logOf(testApp,
			Entry{Time: t0, Kind: KindDeploy, To: "1.3.0", Ref: "deploy-web-rollback-1", Revision: "1.3.0", Count: 1},
			Entry{Time: t0.Add(time.Second), Kind: KindHealth, From: "Healthy", To: "Degraded", Message: hostile, Count: 4, Last: t0.Add(time.Minute)}),
		logOf(other, Entry{Time: t0.Add(-time.Hour), Kind: KindWarning, Ref: hostile, Message: hostile, Count: 1}),
	}
	data, err := encodeShard(in)
	if err != nil {
		t.Fatal(err)
	}
	got, skipped, err := decodeShard("s", data)
	if err != nil || skipped != 0 {
		t.Fatalf("decodeShard() = %d skipped, %v; want 0, nil", skipped, err)
	}
	if diff := cmp.Diff(in, got, cmp.AllowUnexported(appLog{}, rec{})); diff != "" {
		t.Errorf("decodeShard(encodeShard(x)) (-x +got):\n%s", diff)
	}
}

func TestDecodeShardRefuses(t *testing.T) {
	// A gzip stream of gzip members, each 1 MiB of zeros: gzip.Reader
	// reads them as one stream past MaxShardDecoded.
	member := gz(t, make([]byte, 1<<20))
	bomb := bytes.Repeat(member, MaxShardDecoded>>20+1)
	tests := []struct {
		name, want string
		data       []byte
	}{
		{"not gzip", "gzip: invalid header", []byte("this is not gzip data")},
		{"not JSON", "invalid character", gz(t, []byte("not json"))},
		{"other version", "encoding version 2, want 1", gz(t, []byte(`{"v":2,"apps":[]}`))},
		{"columns of different lengths", "apps[0] (shop/checkout): columns of different lengths",
			gz(t, []byte(`{"v":1,"apps":[{"n":"shop","a":"checkout","t":[1,2],"k":["health"],"f":[],"o":[],"m":[],"r":[],"v":[],"x":[],"l":[]}]}`))},
		{"gzip bomb", "decompresses to more than the limit", bomb},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeShard(ShardName(7), tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "deploy-web-timeline-007") {
				t.Errorf("decodeShard() = %v, want an error naming the ConfigMap and %q", err, tt.want)
			}
		})
	}
}

func TestDecodeShardCapsAndSkips(t *testing.T) {
	long := strings.Repeat("x", 3*MaxMessageBytes)
	doc := fmt.Sprintf(`{"v":1,"apps":[{"n":"shop","a":"checkout","t":[1000,5],"k":["health","bogus"],"f":["",""],"o":["",""],"m":[%q,""],"r":["",""],"v":["",""],"x":[0,1],"l":[0,0]}]}`, long)
	logs, skipped, err := decodeShard("s", gz(t, []byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 1 || len(logs) != 1 || len(logs[0].entries) != 1 {
		t.Fatalf("decodeShard() = %d logs, %d skipped; want 1 log of 1 entry, 1 skipped (unknown kind)", len(logs), skipped)
	}
	if e := logs[0].list()[0]; len(e.Message) != MaxMessageBytes || e.Count != 1 {
		t.Errorf("entry read has a %d-byte message, count %d; want %d bytes, count 1", len(e.Message), e.Count, MaxMessageBytes)
	}
}

// TestFitShardDropsOldest fills a shard past a small limit: the oldest
// entries go, the newest of every App stay.
func TestFitShardDropsOldest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var logs []*appLog
	for a := range 20 {
		app := App{Namespace: "ns", Name: fmt.Sprintf("app-%02d", a)}
		var es []Entry
		for i := range 200 {
			es = append(es, Entry{Time: t0.Add(time.Duration(i)*time.Minute + time.Duration(a)*time.Second),
				Kind: KindWarning, Message: fmt.Sprintf("message %x", r.Uint64()), Count: 1})
		}
		logs = append(logs, logOf(app, es...))
	}
	const limit = 16 << 10
	data, dropped, err := fitShard(logs, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > limit || dropped == 0 {
		t.Fatalf("fitShard() = %d bytes, %d dropped; want at most %d bytes after dropping some", len(data), dropped, limit)
	}
	kept := 0
	var oldestKept time.Time
	for _, l := range logs {
		es := l.list()
		kept += len(es)
		if n := len(es); n == 0 || es[n-1].Time.Sub(t0) < 199*time.Minute {
			t.Errorf("%s: newest entry dropped", l.app.Name)
			continue
		}
		if oldestKept.IsZero() || es[0].Time.Before(oldestKept) {
			oldestKept = es[0].Time
		}
	}
	if kept+dropped != 20*200 {
		t.Errorf("kept %d + dropped %d, want %d", kept, dropped, 20*200)
	}
	// Entries are a minute apart per App (the Apps a second apart): only
	// the oldest go, so nothing kept is older than the dropped share.
	if want := t0.Add(time.Duration(dropped/20-1) * time.Minute); oldestKept.Before(want) {
		t.Errorf("oldest kept entry at %v, want none before %v (only the oldest go)", oldestKept.Sub(t0), want.Sub(t0))
	}
}

func TestShardOfSpreads(t *testing.T) {
	const shards, apps = 256, 10_000
	count := make([]int, shards)
	for i := range apps {
		count[shardOf(App{Namespace: fmt.Sprintf("team-%d", i%40), Name: fmt.Sprintf("svc-%d", i)}, shards)]++
	}
	lo, hi := apps, 0
	for _, c := range count {
		lo, hi = min(lo, c), max(hi, c)
	}
	// 39 per shard on average; a hash keeps every shard within 2x.
	if lo < apps/shards/2 || hi > 2*apps/shards {
		t.Errorf("Apps per shard from %d to %d, want within %d..%d", lo, hi, apps/shards/2, 2*apps/shards)
	}
	if got := ShardName(7); got != "deploy-web-timeline-007" {
		t.Errorf("ShardName(7) = %q, want deploy-web-timeline-007", got)
	}
}

// TestDecodeShardCapsCounts: a shard edited to hold counts past what an
// entry holds (they would wrap negative in the index's 4 bytes) reads
// them as MaxCount, a count below 1 as 1, and a fold at MaxCount stays
// there.
func TestDecodeShardCapsCounts(t *testing.T) {
	doc := `{"v":1,"apps":[{"n":"shop","a":"checkout","t":[1000,5,5],"k":["restart","warning","oom"],"f":["","",""],"o":["","",""],` +
		`"m":["","",""],"r":["p/app","x","p/app"],"v":["","",""],"x":[1099511627776,4294967297,-7],"l":[0,0,0]}]}`
	logs, _, err := decodeShard("s", gz(t, []byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, e := range logs[0].list() {
		got = append(got, e.Count)
	}
	if diff := cmp.Diff([]int{MaxCount, MaxCount, 1}, got); diff != "" {
		t.Errorf("counts read (-want +got):\n%s", diff)
	}
	l := logs[0]
	lim := Limits{}.withDefaults()
	e := Entry{Time: time.UnixMilli(1005 + 60_000), App: testApp, Kind: KindWarning, Ref: "x", Count: 1}.normalize()
	if c := l.add(recOf(&e), lim, e.Time); c != folded || l.list()[1].Count != MaxCount {
		t.Errorf("a fold into a count of MaxCount = %d, count %d; want folded, %d", c, l.list()[1].Count, MaxCount)
	}
}
