package kubeview

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/deploy-web/search"
)

// ComputeAllRows computes the row of every cached App into a new fleet, as
// Start does once the informers have synced, and returns how many rows it
// made. The benchmarks time the initial computation with it.
func ComputeAllRows(c *Cache) int {
	f := newFleet(c)
	f.recomputeAll()
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.rows)
}

// ChangeRow changes the i-th row of the fleet (in name order) as an event
// would: a new row with another ready count, encoded and merged into the
// sorted list by the same steps as a recomputed row's.
func ChangeRow(c *Cache, i int) {
	f := c.fleet
	f.mu.RLock()
	old := f.sorted[i%len(f.sorted)]
	f.mu.RUnlock()
	row := &fleetRow{AppRow: old.AppRow}
	row.Replicas.Ready ^= 1
	row.json = encodeRow(&row.AppRow)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apply([]rowChange{{key: old.Key(), row: row}})
	f.bump()
}

// DropSearchIndex empties the search's index and label store, as if the
// cache kept none: the memory benchmark measures what they hold.
func DropSearchIndex(c *Cache) {
	var all []search.AppKey
	c.search.SearchApps(&search.Query{}, func(a search.App) bool {
		all = append(all, search.AppKey{Namespace: a.Namespace, Name: a.Name})
		return true
	})
	c.search.Update(nil, all)
	c.labels.mu.Lock()
	c.labels.byUID, c.labels.sets = map[types.UID]*labelSet{}, map[string]*labelSet{}
	c.labels.mu.Unlock()
}

// IndexApps rebuilds the search index entries of the Apps at keys
// ("namespace/name"), as the list's recompute does on an event.
func IndexApps(c *Cache, keys []string) { c.indexApps(keys) }
