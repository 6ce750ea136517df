package audit

import (
	"fmt"
	"sync"
	"time"

	"github.com/hanzoai/deploy-web/internal/limit"
)

// RefusalLimit is how many refused writes one person may have recorded:
// Burst at once, then one more each Every. Past it, their writes are
// answered 429 with Retry-After before anything is tried or recorded
// (the handlers' adapter asks Limiter.Wait), so no one floods the record
// with refusals. Zero fields take the defaults.
type RefusalLimit struct {
	Burst int
	Every time.Duration
	// MaxPeople bounds the people tracked at once (the memory): past it,
	// the person whose budget was touched longest ago is forgotten.
	MaxPeople int
}

// Refusal limit defaults: 20 refusals at once, then one a minute, for
// at most 10000 people.
const (
	DefaultRefusalBurst     = 20
	DefaultRefusalEvery     = time.Minute
	DefaultRefusalMaxPeople = 10000
)

// Limiter counts refused records per person (Actor's email, else
// subject): the Store counts each refused record it appends; the
// handlers ask Wait before a write. It is safe for concurrent use; its
// memory is bounded by MaxPeople. Each replica counts its own.
type Limiter struct {
	lim RefusalLimit
	now func() time.Time

	mu     sync.Mutex
	people map[string]*budget
}

// budget is one person's token bucket: tokens at at.
type budget struct {
	tokens float64
	at     time.Time
}

// NewLimiter returns a limiter of lim on the clock now (time.Now when
// nil).
func NewLimiter(lim RefusalLimit, now func() time.Time) *Limiter {
	lim.Burst = limit.Or(lim.Burst, DefaultRefusalBurst)
	lim.Every = limit.Or(lim.Every, DefaultRefusalEvery)
	lim.MaxPeople = limit.Or(lim.MaxPeople, DefaultRefusalMaxPeople)
	if now == nil {
		now = time.Now
	}
	return &Limiter{lim: lim, now: now, people: map[string]*budget{}}
}

// refill is b's tokens at now (at most Burst).
func (l *Limiter) refill(b *budget, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(float64(l.lim.Burst), b.tokens+float64(d)/float64(l.lim.Every))
	}
	b.at = now
}

// Wait is how long a must wait before their next write may be tried: 0
// while they have refusals left.
func (l *Limiter) Wait(a Actor) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.people[a.Key()]
	if !ok {
		return 0
	}
	now := l.now()
	l.refill(b, now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) * float64(l.lim.Every))
}

// Refused counts one refused record of a.
func (l *Limiter) Refused(a Actor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	k := a.Key()
	b, ok := l.people[k]
	if !ok {
		if len(l.people) >= l.lim.MaxPeople {
			l.forgetOldest()
		}
		b = &budget{tokens: float64(l.lim.Burst), at: now}
		l.people[k] = b
	}
	l.refill(b, now)
	b.tokens = max(0, b.tokens-1)
}

// forgetOldest drops the person whose budget was touched longest ago.
func (l *Limiter) forgetOldest() {
	var oldest string
	var at time.Time
	for k, b := range l.people {
		if oldest == "" || b.at.Before(at) {
			oldest, at = k, b.at
		}
	}
	delete(l.people, oldest)
}

// RateLimitedError refuses a write of a person who has had too many
// writes refused lately; RetryAfter is how long to wait.
type RateLimitedError struct {
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string { return "audit: " + e.Public() }

// Public is the refusal's text for people.
func (e *RateLimitedError) Public() string {
	return fmt.Sprintf("too many of your writes were refused lately: nothing was tried or recorded; try again in %s", e.RetryAfter.Round(time.Second))
}
