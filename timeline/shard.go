package timeline

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"time"
)

// Names the cluster sees: the shard ConfigMaps, in the store's namespace.
const (
	// ShardPrefix starts every shard ConfigMap's name:
	// deploy-web-timeline-000 ... deploy-web-timeline-255.
	ShardPrefix = "deploy-web-timeline-"
	// KindValue is the shards' value of labels.Kind.
	KindValue = "timeline"
	// DataKey is the shard's gzip-compressed columnar JSON.
	DataKey = "entries.json.gz"
	// LeaseName is the Lease whose holder writes the shards (the
	// command wires Options.IsLeader to it).
	LeaseName = "deploy-web-timeline"
)

// Shard limits.
const (
	// DefaultShards is the number of shard ConfigMaps: 10,000 Apps at 300
	// entries each (10 a day for 30 days) is about 400 KiB per shard.
	DefaultShards = 256
	// MaxShards bounds Options.Shards.
	MaxShards = 4096
	// MaxShardBytes is the most a shard's compressed data may take (a
	// ConfigMap holds 1 MiB); a fuller shard drops its oldest entries.
	MaxShardBytes = 900 << 10
	// MaxShardDecoded is the most a shard may decompress to; a larger one
	// (a gzip bomb written by someone else) is refused.
	MaxShardDecoded = 32 << 20
	// shardVersion is the encoding's version.
	shardVersion = 1
)

// shardOf returns the shard of an App: a hash bucket, so Apps spread
// evenly whatever their namespaces.
func shardOf(a App, shards int) int {
	h := fnv.New64a()
	for _, s := range [...]string{a.Cluster, a.Namespace, a.Name} {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	return int(h.Sum64() % uint64(shards))
}

// ShardName returns the ConfigMap name of shard i.
func ShardName(i int) string { return fmt.Sprintf("%s%03d", ShardPrefix, i) }

// shardDoc is a shard's JSON: one columnar record per App, which gzip
// compresses to a few bytes per entry (times are millisecond deltas,
// states repeat).
type shardDoc struct {
	V    int        `json:"v"`
	Apps []shardApp `json:"apps"`
}

type shardApp struct {
	Cluster   string `json:"c,omitempty"`
	Namespace string `json:"n"`
	Name      string `json:"a"`
	// T is the first entry's time in Unix milliseconds, then each next
	// entry's distance from the one before.
	T []int64  `json:"t"`
	K []Kind   `json:"k"`
	F []string `json:"f"`
	O []string `json:"o"`
	M []string `json:"m"`
	R []string `json:"r"`
	V []string `json:"v"`
	// X is each entry's count; L its Last minus its Time in milliseconds
	// (0 without Last).
	X []int   `json:"x"`
	L []int64 `json:"l"`
}

// encodeShard writes the logs (sorted by App) as gzip-compressed JSON.
func encodeShard(logs []*appLog) ([]byte, error) {
	doc := shardDoc{V: shardVersion, Apps: make([]shardApp, 0, len(logs))}
	for _, l := range logs {
		if len(l.entries) == 0 {
			continue
		}
		n := len(l.entries)
		a := shardApp{Cluster: l.app.Cluster, Namespace: l.app.Namespace, Name: l.app.Name,
			T: make([]int64, n), K: make([]Kind, n), F: make([]string, n), O: make([]string, n),
			M: make([]string, n), R: make([]string, n), V: make([]string, n), X: make([]int, n), L: make([]int64, n)}
		var prev int64
		for i, e := range l.entries {
			a.T[i], prev = e.at-prev, e.at
			a.K[i], a.F[i], a.O[i], a.M[i], a.R[i], a.V[i], a.X[i] = e.kind.kind(), e.from, e.to, e.msg, e.ref, e.rev, int(e.count)
			if e.last != 0 {
				a.L[i] = e.last - e.at
			}
		}
		doc.Apps = append(doc.Apps, a)
	}
	var buf bytes.Buffer
	// DefaultCompression: 3% larger than BestCompression on a full
	// shard, at a third of the CPU (BenchmarkFlushEncode).
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, fmt.Errorf("timeline: encode shard: %w", err)
	}
	if err := json.NewEncoder(zw).Encode(doc); err != nil {
		return nil, fmt.Errorf("timeline: encode shard: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("timeline: encode shard: %w", err)
	}
	return buf.Bytes(), nil
}

var errShardTooLarge = errors.New("decompresses to more than the limit")

// decodeShard reads a shard's data. Entries are held to the caps of an
// entry (normalize); an entry of an unknown kind is skipped and counted.
// A shard that is not gzip, not the JSON above, of another version, with
// columns of different lengths or decompressing past MaxShardDecoded is
// an error naming the ConfigMap.
func decodeShard(name string, gz []byte) (logs []*appLog, skipped int, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, 0, fmt.Errorf("timeline: read ConfigMap %s key %s: %w", name, DataKey, err)
	}
	defer zr.Close()
	raw, err := io.ReadAll(io.LimitReader(zr, MaxShardDecoded+1))
	if err != nil {
		return nil, 0, fmt.Errorf("timeline: read ConfigMap %s key %s: %w", name, DataKey, err)
	}
	if len(raw) > MaxShardDecoded {
		return nil, 0, fmt.Errorf("timeline: read ConfigMap %s key %s: %w (%d bytes); delete the ConfigMap to start its shard afresh", name, DataKey, errShardTooLarge, MaxShardDecoded)
	}
	var doc shardDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, 0, fmt.Errorf("timeline: read ConfigMap %s key %s: %w", name, DataKey, err)
	}
	if doc.V != shardVersion {
		return nil, 0, fmt.Errorf("timeline: read ConfigMap %s key %s: encoding version %d, want %d", name, DataKey, doc.V, shardVersion)
	}
	// The index keeps what is decoded: one copy of each distinct string
	// of the shard (states, revisions, repeated messages and refs).
	seen := map[string]string{}
	intern := func(s string) string {
		if v, ok := seen[s]; ok {
			return v
		}
		seen[s] = s
		return s
	}
	for ai, a := range doc.Apps {
		n := len(a.T)
		for _, l := range []int{len(a.K), len(a.F), len(a.O), len(a.M), len(a.R), len(a.V), len(a.X), len(a.L)} {
			if l != n {
				return nil, 0, fmt.Errorf("timeline: read ConfigMap %s key %s: apps[%d] (%s/%s): columns of different lengths", name, DataKey, ai, a.Namespace, a.Name)
			}
		}
		app := App{Cluster: intern(a.Cluster), Namespace: intern(a.Namespace), Name: a.Name}
		l := &appLog{entries: make([]rec, 0, n)}
		var t int64
		for i := range n {
			t += a.T[i]
			if !a.K[i].Valid() {
				skipped++
				continue
			}
			e := Entry{Time: time.UnixMilli(t), App: app, Kind: Kind(intern(string(a.K[i]))), From: intern(a.F[i]), To: intern(a.O[i]),
				Message: intern(a.M[i]), Ref: intern(a.R[i]), Revision: intern(a.V[i]), Count: a.X[i]}
			if a.L[i] > 0 {
				e.Last = time.UnixMilli(t + a.L[i])
			}
			e = e.normalize()
			if len(l.entries) == 0 {
				l.app = e.App
			}
			// normalize may copy a string it cuts or repairs: intern again.
			r := recOf(&e)
			r.from, r.to, r.msg, r.ref, r.rev = intern(r.from), intern(r.to), intern(r.msg), intern(r.ref), intern(r.rev)
			l.entries = append(l.entries, r)
		}
		if len(l.entries) == 0 {
			continue
		}
		slices.SortStableFunc(l.entries, func(x, y rec) int { return compareRecs(&x, &y) })
		l.entries = slices.Clip(l.entries)
		logs = append(logs, l)
	}
	return logs, skipped, nil
}

// fitShard encodes the logs within limit bytes, dropping the shard's oldest
// entries (never the newest) from the logs until they fit. It returns the
// data and the number of entries dropped.
func fitShard(logs []*appLog, limit int) ([]byte, int, error) {
	dropped := 0
	for {
		data, err := encodeShard(logs)
		if err != nil || len(data) <= limit {
			return data, dropped, err
		}
		total := 0
		for _, l := range logs {
			total += len(l.entries)
		}
		if total <= 1 {
			return nil, dropped, fmt.Errorf("timeline: one entry does not fit in %d bytes", limit)
		}
		// Drop a share of the entries at least as large as the excess,
		// and a tenth more, so a few rounds suffice.
		drop := max(1, total-int(float64(total)*float64(limit)/float64(len(data))*0.95))
		dropped += dropOldest(logs, drop)
	}
}

// dropOldest removes the n oldest entries across the logs.
func dropOldest(logs []*appLog, n int) int {
	times := make([]int64, 0)
	for _, l := range logs {
		for i := range l.entries {
			times = append(times, l.entries[i].lastAt())
		}
	}
	n = min(n, len(times))
	if n == 0 {
		return 0
	}
	slices.Sort(times)
	cutoff := times[n-1]
	// Entries at the cutoff go too only while n allows (ties).
	atCutoff := n - slices.Index(times, cutoff)
	removed := 0
	for _, l := range logs {
		l.entries = slices.DeleteFunc(l.entries, func(e rec) bool {
			t := e.lastAt()
			if t < cutoff {
				removed++
				return true
			}
			if t == cutoff && atCutoff > 0 {
				atCutoff--
				removed++
				return true
			}
			return false
		})
	}
	return removed
}

// sortLogs orders logs by App, so a shard's encoding is stable.
func sortLogs(logs []*appLog) {
	slices.SortFunc(logs, func(a, b *appLog) int {
		return cmp.Or(cmp.Compare(a.app.Cluster, b.app.Cluster), cmp.Compare(a.app.Namespace, b.app.Namespace), cmp.Compare(a.app.Name, b.app.Name))
	})
}
