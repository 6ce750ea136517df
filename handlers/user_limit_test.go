package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/kubeview"
)

func TestUserLimiter(t *testing.T) {
	l := newUserLimiter("log reads", 2, 3)
	type step struct {
		user    string
		release int // >= 0: release the slot taken at this step instead
		wantOK  bool
		wantMsg string
	}
	var releases []func()
	for i, st := range []step{
		{user: "alice", release: -1, wantOK: true},
		{user: "alice", release: -1, wantOK: true},
		{user: "alice", release: -1, wantMsg: "you already have 2 log reads in progress"},
		{user: "bob", release: -1, wantOK: true},
		{user: "carol", release: -1, wantMsg: "the server is already serving 3 log reads"},
		{release: 0},
		{user: "carol", release: -1, wantOK: true},
		{user: "alice", release: -1, wantMsg: "the server is already serving 3 log reads"},
	} {
		if st.release >= 0 {
			releases[st.release]()
			releases[st.release]() // twice: counted once
			releases = append(releases, nil)
			continue
		}
		rel, msg := l.acquire(st.user)
		releases = append(releases, rel)
		if (rel != nil) != st.wantOK || !strings.Contains(msg, st.wantMsg) {
			t.Fatalf("step %d: acquire(%q) = (ok %v, %q), want (ok %v, %q)", i, st.user, rel != nil, msg, st.wantOK, st.wantMsg)
		}
	}
	for _, rel := range releases {
		if rel != nil {
			rel()
		}
	}
	if n := l.inUse(); n != 0 {
		t.Errorf("inUse() after every release = %d, want 0", n)
	}
}

// gatedLogs is a LogSource whose reads wait for gate; each read says it
// started on entered.
type gatedLogs struct {
	*fakeLogs
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedLogs) Read(ctx context.Context, q kubeview.LogQuery) (kubeview.LogResult, error) {
	g.entered <- struct{}{}
	<-g.gate
	return g.fakeLogs.Read(ctx, q)
}

// TestLogReadsPerUserCap: 50 parallel non-follow log reads of one user:
// 4 (the default cap) reach the log source, 46 are answered 429 at once,
// and once the 4 end the next read goes through.
func TestLogReadsPerUserCap(t *testing.T) {
	const n = 50
	g := &gatedLogs{
		fakeLogs: &fakeLogs{pods: webPods, result: kubeview.LogResult{Pods: webPods, Lines: []kubeview.LogLine{{TS: logT0, Line: "hello"}}}},
		entered:  make(chan struct{}, n), gate: make(chan struct{}),
	}
	ts := newLogsServer(t, nil, func(o *Options) { o.Clusters[0].Logs = g })
	results := make(chan *httptest.ResponseRecorder, n)
	for i := range n {
		target := "/v1/deploy/web/logs"
		if i%2 == 1 {
			target = "/clusters/in-cluster/apps/apps/web/logs?follow=false" // the viewer reads too
		}
		go func() { results <- ts.get(t, target, nil) }()
	}
	entered, refused := 0, 0
	for entered+refused < n {
		select {
		case <-g.entered:
			entered++
		case w := <-results:
			if w.Code != http.StatusTooManyRequests {
				t.Fatalf("a read answered %d before any read was let through, want 429: %.300s", w.Code, w.Body)
			}
			if !strings.Contains(w.Body.String(), "you already have 4 log reads in progress") {
				t.Errorf("429 body = %.300s, want the per-user refusal", w.Body)
			}
			refused++
		}
	}
	if entered != 4 || refused != n-4 {
		t.Errorf("50 parallel reads: %d reached the log source, %d refused; want 4 and 46", entered, refused)
	}
	close(g.gate)
	for range entered {
		if w := <-results; w.Code != http.StatusOK {
			t.Errorf("an admitted read answered %d, want 200: %.300s", w.Code, w.Body)
		}
	}
	if w := ts.get(t, "/v1/deploy/web/logs", nil); w.Code != http.StatusOK {
		t.Errorf("a read after the others ended = %d, want 200", w.Code)
	}
	if u := ts.srv.logReads.inUse(); u != 0 {
		t.Errorf("log read slots in use at the end = %d, want 0", u)
	}
}

// TestLimited: a wrapped handler (the plan-run stream's wrapper) runs only
// with a slot; a request over the cap is a 429 that never starts it.
func TestLimited(t *testing.T) {
	l := newUserLimiter("plan-run streams", 1, 10)
	started, gate := make(chan struct{}), make(chan struct{})
	ran := 0
	h := limited(l, func(w http.ResponseWriter, r *http.Request) error {
		ran++
		started <- struct{}{}
		<-gate
		return nil
	})
	first := make(chan error, 1)
	go func() { first <- h(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) }()
	<-started
	err := h(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	he, ok := err.(*httpError)
	if !ok || he.Status != http.StatusTooManyRequests {
		t.Errorf("second stream of the same user = %v, want a 429 httpError", err)
	}
	close(gate)
	if err := <-first; err != nil {
		t.Errorf("first stream = %v, want nil", err)
	}
	if ran != 1 || l.inUse() != 0 {
		t.Errorf("handler ran %d times, %d slots in use; want 1 and 0", ran, l.inUse())
	}
}

// TestActorName: the request's person as logs and Events name them
// (actor.Actor.String, which tests hostile names).
func TestActorName(t *testing.T) {
	for _, tt := range []struct {
		id   auth.Identity
		want string
	}{
		{auth.Identity{Subject: "u-1", Email: "ada@example.com"}, "ada@example.com (sub u-1)"},
		{auth.Identity{Subject: "u-1"}, "sub u-1"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r = r.WithContext(auth.NewContext(r.Context(), tt.id, ""))
		if got := actor(r); got != tt.want {
			t.Errorf("actor(a request of %+v) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

// takeEverySlot acquires l's slots for user until it refuses, and returns
// their releases.
func takeEverySlot(l *userLimiter, user string) []func() {
	var releases []func()
	for {
		rel, _ := l.acquire(user)
		if rel == nil {
			return releases
		}
		releases = append(releases, rel)
	}
}

// TestRunStreamRouteLimited: the plan-run stream's route goes through the
// per-user cap: with the user's slots taken it is a 429 before the run is
// even looked up (a 404 here once a slot is free).
func TestRunStreamRouteLimited(t *testing.T) {
	ts := newTestServer(t, newFakeView(nil))
	releases := takeEverySlot(ts.srv.runStreams, testIdentity.Subject)
	const target = "/environments/dev/runs/r1/stream"
	if w := ts.get(t, target, nil); w.Code != http.StatusTooManyRequests {
		t.Errorf("GET %s with every slot of the user taken = %d, want 429", target, w.Code)
	}
	releases[0]()
	if w := ts.get(t, target, nil); w.Code == http.StatusTooManyRequests {
		t.Errorf("GET %s with a slot free = 429, want it to reach the handler", target)
	}
	if len(releases) != 10 {
		t.Errorf("plan-run stream slots per user = %d, want 10", len(releases))
	}
}
