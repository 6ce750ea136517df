package kubeview

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Follow streams an App's logs until ctx ends, emitting lines and status
// changes in order from the calling goroutine. By default it follows the
// newest running pod and moves on to the next one when that pod ends (a
// rollout); with q.Pod it follows that pod until it ends. The tail is read
// first; a stream that drops (apiserver timeout, container restart) is
// reopened where it stopped, without repeating lines. It returns nil when
// ctx ends or the stream is over, or the emit error.
func (l *Logs) Follow(ctx context.Context, q LogQuery, emit func(LogEvent) error) error {
	q = q.normalized()
	f := &follower{l: l, q: q, emit: emit, cur: cursor{since: q.SinceTime, skip: q.SkipAtSince}}
	return f.run(ctx)
}

// follower is the state of one Follow.
type follower struct {
	l    *Logs
	q    LogQuery
	emit func(LogEvent) error
	cur  cursor
	// lastStatus suppresses repeated identical statuses.
	lastStatus LogStatus
}

func (f *follower) status(s LogStatus) error {
	if s == f.lastStatus {
		return nil
	}
	f.lastStatus = s
	return f.emit(LogEvent{Status: &s})
}

func (f *follower) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (f *follower) run(ctx context.Context) error {
	q := f.q
	pinned := q.Pod != ""
	var prev string        // the pod read last
	var prevRestarts int32 // its container's restart count when opened
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		pod, reason, err := choosePod(f.l.src.appPods(q.Namespace, q.App), q.Pod)
		if errors.Is(err, ErrPodNotInApp) {
			if prev == "" {
				return err
			}
			return f.status(LogStatus{Status: StatusDone, Pod: q.Pod, Message: "pod " + q.Pod + " no longer exists: the stream is over"})
		}
		if pod == nil {
			if err := f.status(LogStatus{Status: StatusWaiting, Message: reason + "; waiting for a running pod"}); err != nil {
				return err
			}
			if !f.sleep(ctx, f.l.poll) {
				return nil
			}
			continue
		}
		container, err := chooseContainer(pod, q.App, q.Container)
		if err != nil {
			if prev == "" {
				return err
			}
			return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Message: "pod " + pod.Name + " has no container " + q.Container + ": the stream is over"})
		}
		restarts := restartsOf(pod, container)
		opts := logOptions(q, container, !q.Previous)
		switch {
		case prev == "":
			err = f.status(LogStatus{Status: StatusStreaming, Pod: pod.Name, Container: container,
				Message: "following pod " + pod.Name + ", container " + container})
		case prev != pod.Name:
			err = f.status(LogStatus{Status: StatusResumed, Pod: pod.Name, Container: container,
				Message: "resumed on pod " + pod.Name + " (replaced " + prev + ")"})
		case restarts > prevRestarts:
			err = f.status(LogStatus{Status: StatusResumed, Pod: pod.Name, Container: container,
				Message: fmt.Sprintf("container %s restarted (restart %d): resumed", container, restarts)})
		}
		if err != nil {
			return err
		}
		if prev != "" && !f.cur.last.IsZero() {
			// Resume after the last line emitted: everything newer, bounded.
			f.cur.resumeAt()
			if prev != pod.Name {
				f.cur.skip = 0 // another pod: equal timestamps are other lines
			}
			tail := int64(MaxTail)
			t := metav1.NewTime(f.cur.since)
			opts.TailLines, opts.SinceSeconds, opts.SinceTime = &tail, nil, &t
		}
		prev, prevRestarts = pod.Name, restarts
		lines := f.cur.lines
		ended, err := f.stream(ctx, pod, opts)
		if ctx.Err() != nil {
			return nil
		}
		var emitErr emitError
		if errors.As(err, &emitErr) {
			return emitErr.err
		}
		if q.Previous {
			if err != nil {
				return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Container: container, Message: upstreamReason(err, pod.Name, container)})
			}
			return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Container: container, Message: "end of the previous container's logs"})
		}
		if ended == "" && err == nil {
			// The stream ended by itself: did the pod end?
			if p := f.l.findPod(q.Namespace, q.App, pod.Name); p == nil {
				ended = "deleted"
			} else if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				ended = string(p.Status.Phase)
			}
		}
		if ended != "" {
			if err := f.status(LogStatus{Status: StatusEnded, Pod: pod.Name, Container: container, Message: "pod " + pod.Name + " ended (" + ended + ")"}); err != nil {
				return err
			}
			if pinned {
				return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Container: container, Message: "pod " + pod.Name + " ended: the stream is over"})
			}
			backoff = 0
			continue
		}
		if err != nil {
			if apierrors.IsForbidden(err) {
				return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Container: container, Message: upstreamReason(err, pod.Name, container)})
			}
			st := StatusError
			msg := upstreamReason(err, pod.Name, container) + ": retrying"
			if apierrors.IsBadRequest(err) {
				st = StatusWaiting // "container ... is waiting to start"
			}
			if err := f.status(LogStatus{Status: st, Pod: pod.Name, Container: container, Message: msg}); err != nil {
				return err
			}
		}
		// Reopen the same pod; back off when nothing came through.
		if f.cur.lines > lines {
			backoff = 0
		} else {
			backoff = min(max(backoff*2, f.l.poll), 10*f.l.poll)
		}
		if !f.sleep(ctx, backoff) {
			return nil
		}
	}
	return nil
}

// emitError wraps an error from the caller's emit, so that it is told
// apart from upstream errors.
type emitError struct{ err error }

func (e emitError) Error() string { return e.err.Error() }

// stream reads one pod's log stream until it ends, ctx ends, or the pod
// leaves the cache or finishes (a watcher checks every poll and cancels the
// read); ended then says how the pod ended.
func (f *follower) stream(ctx context.Context, pod *corev1.Pod, opts *corev1.PodLogOptions) (ended string, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := make(chan string, 1)
	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	go func() {
		watch <- f.watchPod(sctx, pod.Name, terminal, cancel)
	}()
	defer func() {
		cancel()
		ended = <-watch
	}()
	rc, err := f.l.open(sctx, f.q.Namespace, pod.Name, opts)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	err = consume(sctx, rc, &f.cur, func(ln LogLine) error {
		if eerr := f.emit(LogEvent{Line: ln}); eerr != nil {
			return emitError{eerr}
		}
		return nil
	})
	return "", err
}

// watchPod returns how the pod ended ("deleted", "Failed", ...) after
// canceling the read, or "" when ctx ends first. A pod that had already
// finished when the read began ends it only by being deleted (its logs are
// read to their end).
func (f *follower) watchPod(ctx context.Context, name string, wasTerminal bool, cancel context.CancelFunc) string {
	t := time.NewTicker(f.l.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-t.C:
		}
		p := f.l.findPod(f.q.Namespace, f.q.App, name)
		var ended string
		switch {
		case p == nil:
			ended = "deleted"
		case !wasTerminal && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed):
			ended = string(p.Status.Phase)
		}
		if ended != "" && !f.q.Previous {
			cancel()
			return ended
		}
	}
}

func restartsOf(p *corev1.Pod, container string) int32 {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.RestartCount
		}
	}
	return 0
}
