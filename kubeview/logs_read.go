package kubeview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxReadBytes bounds the log text one non-following read holds.
const maxReadBytes = 16 << 20

// Read returns the logs of one pod of an App (no follow). Upstream failures
// become an empty result with a Reason; only a pod or container the query
// names that is not the App's is an error.
func (l *Logs) Read(ctx context.Context, q LogQuery) (LogResult, error) {
	q = q.normalized()
	res := LogResult{Pods: l.Pods(q.Namespace, q.App), Lines: []LogLine{}}
	pod, reason, err := choosePod(l.src.appPods(q.Namespace, q.App), q.Pod)
	if err != nil {
		return res, err
	}
	if pod == nil {
		res.Reason = reason
		return res, nil
	}
	res.Pod = pod.Name
	if res.Container, err = chooseContainer(pod, q.App, q.Container); err != nil {
		return res, err
	}
	if res.Container == "" {
		res.Reason = "pod " + pod.Name + " has no containers"
		return res, nil
	}
	if st := l.src.Status(); !st.Reachable {
		res.Reason = "the cluster is not reachable: " + st.Error
		return res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.readTimeout)
	defer cancel()
	rc, err := l.open(ctx, q.Namespace, pod.Name, logOptions(q, res.Container, false))
	if err != nil {
		res.Reason = upstreamReason(err, pod.Name, res.Container)
		return res, nil
	}
	defer rc.Close()
	cur := cursor{since: q.SinceTime, skip: q.SkipAtSince}
	bytes, trimmed := 0, false
	err = consume(ctx, rc, &cur, func(ln LogLine) error {
		res.Lines = append(res.Lines, ln)
		bytes += len(ln.Line)
		// Never more than asked, whatever upstream sends, and never more
		// than maxReadBytes held for one request.
		for len(res.Lines) > q.Tail || bytes > maxReadBytes && len(res.Lines) > 1 {
			if len(res.Lines) <= q.Tail {
				trimmed = true
			}
			bytes -= len(res.Lines[0].Line)
			res.Lines = res.Lines[1:]
		}
		return nil
	})
	switch {
	case err == nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Reason = "reading the logs timed out: showing what arrived"
	case err != nil:
		res.Reason = "reading the logs was interrupted: " + upstreamReason(err, pod.Name, res.Container)
	case len(res.Lines) == 0:
		res.Reason = "no log lines"
		if q.Since > 0 || !q.SinceTime.IsZero() {
			res.Reason = "no log lines in the chosen time range"
		}
	case trimmed:
		res.Reason = fmt.Sprintf("showing the newest %d lines: the rest is over the %d MiB a single read returns (narrow ?since= or ?tail=)", len(res.Lines), maxReadBytes>>20)
	}
	return res, nil
}

// logOptions builds the GetLogs options of a query. Timestamps are always
// requested: they stamp each line and let a stream resume exactly.
func logOptions(q LogQuery, container string, follow bool) *corev1.PodLogOptions {
	tail := int64(q.Tail)
	o := &corev1.PodLogOptions{Container: container, Follow: follow, Previous: q.Previous, Timestamps: true, TailLines: &tail}
	switch {
	case !q.SinceTime.IsZero():
		t := metav1.NewTime(q.SinceTime)
		o.SinceTime = &t
	case q.Since > 0:
		s := int64(max(q.Since.Round(time.Second), time.Second) / time.Second)
		o.SinceSeconds = &s
	}
	return o
}

// upstreamReason says, safely for users, why GetLogs failed. It never
// passes on a raw transport error (which could name internal addresses).
func upstreamReason(err error, pod, container string) string {
	var se apierrors.APIStatus
	switch {
	case apierrors.IsNotFound(err):
		return "pod " + pod + " no longer exists"
	case apierrors.IsForbidden(err):
		return "not allowed to read the logs of pod " + pod + " (forbidden)"
	case apierrors.IsBadRequest(err) && errors.As(err, &se):
		// The apiserver's own words: "container "x" in pod "y" is waiting
		// to start: ContainerCreating", "previous terminated container ...
		// not found".
		return "the cluster says: " + sanitize(se.Status().Message)
	case errors.Is(err, context.DeadlineExceeded):
		return "the cluster did not answer in time"
	case isConnError(err):
		return "the cluster is not reachable"
	}
	return "the cluster refused the log request for container " + container
}

func isConnError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || errors.Is(err, io.ErrUnexpectedEOF)
}

func sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
