package kubeview

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

// ForgetSorted drops the fleet's sorted snapshot, as every row change does,
// so that the next Applications sorts the rows again.
func ForgetSorted(c *Cache) {
	c.fleet.mu.Lock()
	defer c.fleet.mu.Unlock()
	c.fleet.sorted = nil
}
