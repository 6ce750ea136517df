package handlers

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/kubeview"
)

// LogStreamLimits bound the live log streams (server-sent events). Zero
// fields take the defaults.
type LogStreamLimits struct {
	// PerUser and Total cap the concurrent streams of one user (by OIDC
	// subject) and of the whole server (defaults 10 and 200).
	PerUser, Total int
	// ReadsPerUser and ReadsTotal cap the concurrent non-follow log reads
	// (the JSON and text API, the viewer's page) of one user and of the
	// whole server (defaults 4 and 32); a read over the cap is a 429. The
	// resource panel's events tab (up to 20 pages of events from the API
	// server per request) has a cap of its own with the same numbers.
	ReadsPerUser, ReadsTotal int
	// RunStreamsPerUser and RunStreamsTotal cap the concurrent plan-run
	// streams (defaults 10 and 200).
	RunStreamsPerUser, RunStreamsTotal int
	// Heartbeat is the interval of the comment lines that keep proxies from
	// closing an idle stream (default 15s).
	Heartbeat time.Duration
	// BufferLines and BufferBytes bound the lines waiting for one client
	// (defaults 1024 lines, 256 KiB).
	BufferLines, BufferBytes int
	// SlowWait is how long a full buffer waits for the client before lines
	// are dropped (and counted in a "lines skipped" event); default 1s.
	SlowWait time.Duration
	// WriteTimeout ends a stream whose client accepts nothing for this long
	// (default 30s).
	WriteTimeout time.Duration
}

func (l LogStreamLimits) withDefaults() LogStreamLimits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.PerUser, 10)
	def(&l.Total, 200)
	def(&l.ReadsPerUser, 4)
	def(&l.ReadsTotal, 32)
	def(&l.RunStreamsPerUser, 10)
	def(&l.RunStreamsTotal, 200)
	def(&l.BufferLines, 1024)
	def(&l.BufferBytes, 256<<10)
	defd(&l.Heartbeat, 15*time.Second)
	defd(&l.SlowWait, time.Second)
	defd(&l.WriteTimeout, 30*time.Second)
	return l
}

// lineID is the resume token of a stream: the timestamp of the last line
// written and how many lines carried it. It is each batch's SSE id, which
// a reconnecting EventSource sends back as Last-Event-ID.
type lineID struct {
	last time.Time
	seen int
}

func (t *lineID) add(ts time.Time) {
	switch {
	case ts.IsZero():
	case ts.Equal(t.last):
		t.seen++
	default:
		t.last, t.seen = ts, 1
	}
}

func (t lineID) String() string {
	if t.last.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.last.UnixNano(), 10) + "-" + strconv.Itoa(t.seen)
}

// parseLineID parses a Last-Event-ID.
func parseLineID(s string) (lineID, bool) {
	ns, n, ok := strings.Cut(s, "-")
	if !ok {
		return lineID{}, false
	}
	nano, err1 := strconv.ParseInt(ns, 10, 64)
	seen, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || nano <= 0 || seen < 0 || seen > kubeview.MaxTail*10 {
		return lineID{}, false
	}
	return lineID{last: time.Unix(0, nano).UTC(), seen: seen}, true
}

// endStream answers with a stream that only says why it ends.
func (s *Server) endStream(w http.ResponseWriter, r *http.Request, enc streamEncoder, message string) error {
	startSSE(w)
	bw := bufio.NewWriter(w)
	if err := enc.end(bw, message); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		s.log.Debug("write log stream", "err", err)
	}
	_ = http.NewResponseController(w).Flush()
	return nil
}

// serveLogStream follows q and writes its events to the client until the
// client goes away, the stream is over, or the server shuts down. One
// goroutine reads the logs into a bounded queue; this one writes. Both end
// before it returns.
func (s *Server) serveLogStream(w http.ResponseWriter, r *http.Request, logs LogSource, q kubeview.LogQuery, p logParams, enc streamEncoder) error {
	if logs == nil {
		return s.endStream(w, r, enc, noLogSourceReason)
	}
	user := ""
	if id, ok := auth.FromContext(r.Context()); ok {
		user = id.Subject
	}
	release, refusal := s.logStreams.acquire(user)
	if release == nil {
		return enc.refuse(s, w, r, refusal)
	}
	defer release()
	limits := s.opts.LogStreams

	var ids lineID
	if id, ok := parseLineID(r.Header.Get("Last-Event-ID")); ok {
		// A reconnect: everything after the last line the client has.
		q.SinceTime, q.SkipAtSince, q.Since, q.Tail = id.last, id.seen, 0, kubeview.MaxTail
		ids = id
	}

	ctx, cancel := context.WithCancel(r.Context())
	shutdown := s.shutdownCtx()
	stopOnShutdown := context.AfterFunc(shutdown, cancel)
	queue := newEventQueue(limits)
	filter := newLineFilter(p.Filter, p.Case)
	var wg sync.WaitGroup
	wg.Go(func() {
		err := logs.Follow(ctx, q, func(ev kubeview.LogEvent) error {
			if ev.Status == nil && !filter.match(ev.Line.Line) {
				return nil
			}
			queue.push(ctx, ev)
			return ctx.Err()
		})
		queue.close(err)
	})
	defer func() {
		stopOnShutdown()
		cancel()
		wg.Wait()
	}()

	st := openSSE(w, 32<<10, limits.WriteTimeout)
	st.retry(2 * time.Second)
	bw, flush := st.Writer, st.flush
	if err := flush(); err != nil {
		return nil
	}
	heartbeat := time.NewTicker(limits.Heartbeat)
	defer heartbeat.Stop()
	// The stream ends when the session is due for its re-check with the
	// IdP: the client reconnects (from its Last-Event-ID) through Require,
	// so a user whose access ended is not streamed to for hours.
	var recheck <-chan time.Time
	if id, ok := auth.FromContext(r.Context()); ok && !id.Recheck.IsZero() {
		t := time.NewTimer(time.Until(id.Recheck))
		defer t.Stop()
		recheck = t.C
	}
	var items []queued
	for {
		select {
		case <-ctx.Done():
			s.endOnCancel(r, shutdown, enc, bw, flush)
			return nil
		case <-recheck:
			_ = enc.notice(bw, "reconnecting", "re-checking your session: reconnecting")
			_ = flush()
			return nil
		case <-heartbeat.C:
			st.heartbeat()
		case <-queue.ready:
			var done bool
			var ferr error
			items, done, ferr = queue.take(items[:0])
			if done && ctx.Err() != nil {
				s.endOnCancel(r, shutdown, enc, bw, flush)
				return nil
			}
			endMsg := "the log stream is over"
			if n := len(items); done && n > 0 && items[n-1].ev.Status != nil && items[n-1].ev.Status.Status == kubeview.StatusDone {
				endMsg, items = items[n-1].ev.Status.Message, items[:n-1]
			} else if ferr != nil {
				endMsg = streamEndMessage(ferr, q)
			}
			if err := enc.batch(bw, items, &ids); err != nil {
				s.log.Error("log stream", "err", err, "request_id", requestID(r.Context()))
				return nil
			}
			clear(items)
			if done {
				_ = enc.end(bw, endMsg)
				_ = flush()
				return nil
			}
		}
		if err := flush(); err != nil {
			return nil // the client is gone (or stuck past the write timeout)
		}
	}
}

// endOnCancel ends a stream whose context ended: on a graceful shutdown
// the client is told to reconnect (with its Last-Event-ID) to the next
// server; a client that went away gets nothing.
func (s *Server) endOnCancel(r *http.Request, shutdown context.Context, enc streamEncoder, bw *bufio.Writer, flush func() error) {
	if shutdown.Err() != nil && r.Context().Err() == nil {
		_ = enc.notice(bw, "reconnecting", "the server is restarting: reconnecting")
		_ = flush()
	}
}

// streamEndMessage says why a stream failed, safely for users.
func streamEndMessage(err error, q kubeview.LogQuery) string {
	switch {
	case errors.Is(err, kubeview.ErrPodNotInApp):
		return "pod " + q.Pod + " is not a pod of app " + q.App
	case errors.Is(err, kubeview.ErrContainerNotInPod):
		return "container " + q.Container + " is not a container of the pod"
	}
	return "the log stream failed"
}
