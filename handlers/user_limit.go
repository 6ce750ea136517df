package handlers

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/hanzoai/deploy-web/auth"
)

// userLimiter caps concurrent requests of one kind (live log streams,
// non-follow log reads, plan-run streams) per user (by OIDC subject) and
// for the whole server.
type userLimiter struct {
	what           string // plural noun for refusals, e.g. "log reads"
	perUser, total int
	// full and busy, when set, replace the refusals for a full server and
	// for a user at the limit; %d is the limit.
	full, busy string

	mu       sync.Mutex
	n        int
	perUserN map[string]int
}

func newUserLimiter(what string, perUser, total int) *userLimiter {
	return &userLimiter{what: what, perUser: perUser, total: total, perUserN: map[string]int{}}
}

// acquire takes a slot for user; it returns the release function, or nil
// and the refusal users see.
func (l *userLimiter) acquire(user string) (func(), string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n >= l.total {
		if l.full != "" {
			return nil, fmt.Sprintf(l.full, l.total)
		}
		return nil, fmt.Sprintf("the server is already serving %d %s, its limit: try again in a moment", l.total, l.what)
	}
	if l.perUserN[user] >= l.perUser {
		if l.busy != "" {
			return nil, fmt.Sprintf(l.busy, l.perUser)
		}
		return nil, fmt.Sprintf("you already have %d %s in progress, the limit per user: wait for one to finish and try again", l.perUser, l.what)
	}
	l.n++
	l.perUserN[user]++
	return sync.OnceFunc(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.n--
		if l.perUserN[user]--; l.perUserN[user] <= 0 {
			delete(l.perUserN, user)
		}
	}), ""
}

// inUse returns the number of slots taken.
func (l *userLimiter) inUse() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// tooMany is the answer to a refused request.
func tooMany(refusal string) *httpError {
	return &httpError{Status: http.StatusTooManyRequests, Reason: "TooManyRequests", Public: refusal}
}

// subjectOf is the user of a request's context for the limiters ("" outside
// Require).
func subjectOf(ctx context.Context) string {
	if id, ok := auth.FromContext(ctx); ok {
		return id.Subject
	}
	return ""
}

// limited wraps h so that it runs only with a slot of l; a refused request
// is a 429 before h starts.
func limited(l *userLimiter, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		release, refusal := l.acquire(subjectOf(r.Context()))
		if release == nil {
			return tooMany(refusal)
		}
		defer release()
		return h(w, r)
	}
}
