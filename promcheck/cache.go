package promcheck

import (
	"sync"
	"time"
)

// cacheKey is what a cached answer was asked with: the metrics URL, the
// query as run, the threshold (or what the answer is for), the window's
// start and the minute it was asked in.
type cacheKey struct {
	url, query, threshold string
	from, minute          int64
}

// minuteCache keeps answers for the rest of the minute they were asked
// in, MaxCached at most (its zero value is ready).
type minuteCache[T any] struct {
	mu sync.Mutex
	m  map[cacheKey]T
}

func (c *minuteCache[T]) get(k cacheKey) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// put keeps v under k, dropping a past minute's entries (stale) and, when
// still full, any one.
func (c *minuteCache[T]) put(k cacheKey, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[cacheKey]T{}
	}
	for old := range c.m {
		if old.minute != k.minute {
			delete(c.m, old)
		}
	}
	for old := range c.m {
		if len(c.m) < MaxCached {
			break
		}
		delete(c.m, old)
	}
	c.m[k] = v
}

// minuteOf is t's minute as a cache key's.
func minuteOf(t time.Time) int64 { return t.Truncate(time.Minute).Unix() }
