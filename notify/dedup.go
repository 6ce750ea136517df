package notify

import (
	"container/list"
	"time"
)

// dedup remembers which messages went out: at most size keys, each for
// ttl. Not safe for concurrent use; the Sender locks it.
type dedup struct {
	size  int
	ttl   time.Duration
	order *list.List // of *dedupEntry, oldest first
	byKey map[string]*list.Element
}

type dedupEntry struct {
	key string
	at  time.Time
}

func newDedup(size int, ttl time.Duration) *dedup {
	return &dedup{size: size, ttl: ttl, order: list.New(), byKey: map[string]*list.Element{}}
}

// seen reports whether key went out less than ttl before now.
func (d *dedup) seen(key string, now time.Time) bool {
	e, ok := d.byKey[key]
	if !ok {
		return false
	}
	if now.Sub(e.Value.(*dedupEntry).at) >= d.ttl {
		d.order.Remove(e)
		delete(d.byKey, key)
		return false
	}
	return true
}

// add records key as sent at at, forgetting the oldest key when full.
func (d *dedup) add(key string, at time.Time) {
	if e, ok := d.byKey[key]; ok {
		e.Value.(*dedupEntry).at = at
		d.order.MoveToBack(e)
		return
	}
	d.byKey[key] = d.order.PushBack(&dedupEntry{key: key, at: at})
	for d.order.Len() > d.size {
		old := d.order.Front()
		d.order.Remove(old)
		delete(d.byKey, old.Value.(*dedupEntry).key)
	}
}

// remove forgets key (a delivery that failed may be tried again).
func (d *dedup) remove(key string) {
	if e, ok := d.byKey[key]; ok {
		d.order.Remove(e)
		delete(d.byKey, key)
	}
}
