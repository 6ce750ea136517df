package deployplan

import "sync"

// forEachBounded calls f(i) for every i below n, at most limit at a time,
// and returns once every call returned. f writes only what belongs to its
// i (a slot of a results slice): the caller reads them after.
func forEachBounded(n, limit int, f func(i int)) {
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}
