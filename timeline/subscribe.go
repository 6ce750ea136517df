package timeline

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Subscription receives the entries recorded from the moment it is made,
// through a bounded channel: when the reader falls behind, the oldest
// waiting entry is dropped for the newest and counted.
type Subscription struct {
	c       chan Entry
	dropped atomic.Uint64
	subs    *subscribers
}

// C is the channel of entries; it is closed by Close.
func (sub *Subscription) C() <-chan Entry { return sub.c }

// Dropped returns how many entries were dropped because the reader was
// behind.
func (sub *Subscription) Dropped() uint64 { return sub.dropped.Load() }

// Close ends the subscription and closes C. It may be called twice.
func (sub *Subscription) Close() {
	sub.subs.mu.Lock()
	defer sub.subs.mu.Unlock()
	if _, ok := sub.subs.set[sub]; ok {
		delete(sub.subs.set, sub)
		close(sub.c)
	}
}

// Default and maximum buffer of a subscription.
const (
	DefaultSubscriptionBuffer = 256
	MaxSubscriptionBuffer     = 4096
)

type subscribers struct {
	mu  sync.Mutex
	set map[*Subscription]struct{}
}

func (s *subscribers) init() { s.set = map[*Subscription]struct{}{} }

// Subscribe returns a subscription to live entries with a buffer of
// buffer entries (DefaultSubscriptionBuffer when 0 or less, at most
// MaxSubscriptionBuffer). At most MaxSubscribers may be open at once.
func (s *Store) Subscribe(buffer int) (*Subscription, error) {
	if buffer <= 0 {
		buffer = DefaultSubscriptionBuffer
	}
	buffer = min(buffer, MaxSubscriptionBuffer)
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if len(s.subs.set) >= MaxSubscribers {
		return nil, fmt.Errorf("timeline: %d live subscribers already: close one first", MaxSubscribers)
	}
	sub := &Subscription{c: make(chan Entry, buffer), subs: &s.subs}
	s.subs.set[sub] = struct{}{}
	return sub, nil
}

// publish sends entries to every subscriber without blocking.
func (s *subscribers) publish(entries []Entry) {
	if len(entries) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.set {
		for _, e := range entries {
			select {
			case sub.c <- e:
				continue
			default:
			}
			// Full: drop the oldest waiting entry (unless the reader just
			// took it), then send; sends are serialized by s.mu.
			select {
			case <-sub.c:
				sub.dropped.Add(1)
			default:
			}
			select {
			case sub.c <- e:
			default:
				sub.dropped.Add(1) // cannot happen: s.mu serializes senders
			}
		}
	}
}
