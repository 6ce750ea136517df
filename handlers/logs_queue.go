package handlers

import (
	"context"
	"sync"
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
)

// queued is one event waiting for the client: a log event, or (skipped >
// 0) the count of lines dropped at this point because the client was slow.
type queued struct {
	ev      kubeview.LogEvent
	skipped int
}

// eventQueue is the bounded buffer between a log stream (the producer) and
// its client (the writer). When it is full the producer waits a little for
// the client, then drops lines and counts them; the writer tells the client
// how many were skipped, where they were.
type eventQueue struct {
	maxItems, maxBytes int
	wait               time.Duration

	mu       sync.Mutex
	items    []queued
	bytes    int
	dropping bool
	closed   bool
	err      error

	ready chan struct{} // something to write (or closed)
	space chan struct{} // the writer took everything
}

func newEventQueue(l LogStreamLimits) *eventQueue {
	return &eventQueue{maxItems: l.BufferLines, maxBytes: l.BufferBytes, wait: l.SlowWait,
		ready: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// itemOverhead is what one queued line costs beyond its text.
const itemOverhead = 96

// push queues ev. Status events always fit (they are few); lines wait up to
// q.wait for room, then are dropped and counted until the writer catches up.
func (q *eventQueue) push(ctx context.Context, ev kubeview.LogEvent) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		q.mu.Lock()
		if ev.Status != nil || len(q.items) < q.maxItems && q.bytes < q.maxBytes {
			q.items = append(q.items, queued{ev: ev})
			q.bytes += len(ev.Line.Line) + itemOverhead
			q.mu.Unlock()
			signal(q.ready)
			return
		}
		if q.dropping {
			q.skipLocked()
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(q.wait)
		}
		select {
		case <-q.space:
		case <-timer.C:
			q.mu.Lock()
			q.dropping = true
			q.skipLocked()
			q.mu.Unlock()
			signal(q.ready)
			return
		case <-ctx.Done():
			return
		}
	}
}

func (q *eventQueue) skipLocked() {
	if n := len(q.items); n > 0 && q.items[n-1].skipped > 0 {
		q.items[n-1].skipped++
		return
	}
	q.items = append(q.items, queued{skipped: 1})
}

// close marks the end of the producer (err: why, if it failed).
func (q *eventQueue) close(err error) {
	q.mu.Lock()
	q.closed, q.err = true, err
	q.mu.Unlock()
	signal(q.ready)
}

// take returns everything queued, handing dst over as the new buffer, and
// whether the producer is done.
func (q *eventQueue) take(dst []queued) ([]queued, bool, error) {
	q.mu.Lock()
	out := q.items
	q.items, q.bytes, q.dropping = dst[:0], 0, false
	closed, err := q.closed, q.err
	q.mu.Unlock()
	signal(q.space)
	return out, closed, err
}
