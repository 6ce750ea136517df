package kubeview

import (
	"github.com/hanzoai/deploy-web/objrules"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestMergeRowsMatchesFullSort applies random batches of new, changed and
// removed rows to a fleet and checks every snapshot against a full sort of
// the fleet's rows, the counts against a recount, and that a snapshot
// taken before a batch is left as it was.
func TestMergeRowsMatchesFullSort(t *testing.T) {
	for seed := range uint64(20) {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 17))
			f := newFleet(&Cache{})
			namespaces := []string{"a", "a-b", "b", "payments"}
			healths := []objrules.HealthStatus{objrules.HealthHealthy, objrules.HealthDegraded, objrules.HealthProgressing}
			for step := range 200 {
				before := f.sorted
				kept := slices.Clone(before)
				// A batch: up to 40 distinct keys, some batches large (as the
				// first computation is).
				n := 1 + rng.IntN(8)
				if rng.IntN(10) == 0 {
					n = 40
				}
				seen := map[string]bool{}
				var changes []rowChange
				for range n {
					r := AppRow{Namespace: namespaces[rng.IntN(len(namespaces))], Name: "app-" + strconv.Itoa(rng.IntN(60))}
					if seen[r.Key()] {
						continue
					}
					seen[r.Key()] = true
					if _, had := f.rows[r.Key()]; had && rng.IntN(3) == 0 {
						changes = append(changes, rowChange{key: r.Key()}) // removed
						continue
					}
					r.Health.Status = healths[rng.IntN(len(healths))]
					r.Sync.Status = SyncSynced
					r.Replicas.Ready = int32(step)
					changes = append(changes, rowChange{key: r.Key(), row: &fleetRow{AppRow: r, json: encodeRow(&r)}})
				}
				f.apply(changes)

				want := make([]*fleetRow, 0, len(f.rows))
				for _, r := range f.rows {
					want = append(want, r)
				}
				slices.SortFunc(want, compareRows)
				if !slices.Equal(f.sorted, want) {
					t.Fatalf("step %d: merged list = %v, want the full sort %v", step, keysOf(f.sorted), keysOf(want))
				}
				if !slices.Equal(before, kept) {
					t.Fatalf("step %d: the snapshot taken before the batch changed", step)
				}
				recount := Counts{Health: map[objrules.HealthStatus]int{}, Sync: map[SyncStatus]int{}}
				for _, r := range f.rows {
					recount.add(&r.AppRow, 1)
				}
				if got, want := nonZeroCounts(f.counts), nonZeroCounts(recount); got.Fleet != want.Fleet || !mapsEqual(got.Health, want.Health) {
					t.Fatalf("step %d: counts = %+v, want %+v", step, got, want)
				}
			}
		})
	}
}

func keysOf(rows []*fleetRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Key()
	}
	return out
}

func mapsEqual[K comparable](a, b map[K]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestMergeRowsEdges covers the boundaries: inserts before the first and
// after the last row, removing every row, and an empty batch.
func TestMergeRowsEdges(t *testing.T) {
	row := func(ns, name string) *fleetRow { return &fleetRow{AppRow: AppRow{Namespace: ns, Name: name}} }
	b, d := row("n", "b"), row("n", "d")
	tests := []struct {
		name   string
		sorted []*fleetRow
		drop   []int
		adds   []*fleetRow
		want   []string
	}{
		{"empty", nil, nil, nil, []string{}},
		{"into empty", nil, nil, []*fleetRow{row("n", "a"), row("n", "c")}, []string{"n/a", "n/c"}},
		{"first and last", []*fleetRow{b, d}, nil, []*fleetRow{row("n", "a"), row("n", "e")}, []string{"n/a", "n/b", "n/d", "n/e"}},
		{"between", []*fleetRow{b, d}, nil, []*fleetRow{row("n", "c")}, []string{"n/b", "n/c", "n/d"}},
		{"replace", []*fleetRow{b, d}, []int{0}, []*fleetRow{row("n", "b")}, []string{"n/b", "n/d"}},
		{"remove all", []*fleetRow{b, d}, []int{0, 1}, nil, []string{}},
		{"namespace first", []*fleetRow{row("n-a", "a")}, nil, []*fleetRow{row("n", "z")}, []string{"n/z", "n-a/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := keysOf(mergeRows(tt.sorted, tt.drop, tt.adds))
			if !slices.Equal(got, tt.want) {
				t.Errorf("mergeRows() = %v, want %v", got, tt.want)
			}
		})
	}
}
