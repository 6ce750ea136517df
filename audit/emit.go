package audit

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxEventMessage bounds an Event's message.
const maxEventMessage = 1024

// emit writes a stored record's second copies: an Event on its head
// ConfigMap (reason: the verb) and its log line. A failed Event is logged,
// not returned: the record is stored.
func (s *Store) emit(ctx context.Context, r *Record, cm *corev1.ConfigMap) {
	typ := corev1.EventTypeNormal
	if r.Outcome != OutcomeSucceeded {
		typ = corev1.EventTypeWarning
	}
	t := metav1.NewTime(r.Time)
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: s.ns, Labels: map[string]string{LabelManagedBy: managedBy}},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name,
			UID: cm.UID, ResourceVersion: cm.ResourceVersion},
		Reason:         string(r.Verb),
		Message:        eventMessage(r),
		Type:           typ,
		Source:         corev1.EventSource{Component: managedBy},
		FirstTimestamp: t,
		LastTimestamp:  t,
		Count:          1,
	}
	if _, err := s.kube.Events(s.ns).Create(ctx, ev, metav1.CreateOptions{FieldManager: managedBy}); err != nil {
		s.log.WarnContext(ctx, "audit: record stored, its Event not", "id", r.ID, "err", err)
	}
	s.logRecord(ctx, r, nil)
}

// eventMessage is one line about r, at most maxEventMessage bytes, with
// control characters replaced (every field may come from hostile input).
func eventMessage(r *Record) string {
	who := r.Actor.String()
	target := "environment " + r.Environment
	if r.Environment == "" {
		target = "App " + r.Namespace + "/" + r.App
	}
	msg := fmt.Sprintf("%s: %s %s of %s on cluster %s: %s, %d object(s), commit %s", r.ID, who, r.Verb, target, r.Cluster, r.Outcome, len(r.Objects), r.Commit)
	if len(r.Blockers) > 0 {
		msg += "; blockers: " + strings.Join(r.Blockers, ", ")
	}
	if r.Message != "" {
		msg += "; " + r.Message
	}
	if r.BreakGlass != "" {
		msg += "; break-glass: " + r.BreakGlass
	}
	msg = strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f || (0x80 <= c && c < 0xa0) || c == 0x2028 || c == 0x2029 {
			return ' '
		}
		return c
	}, msg)
	return cutUTF8(msg, maxEventMessage)
}

// logRecord writes r's structured log line: every field but the
// manifests. err non-nil: the record was not stored, and the line (at
// error level) is its only copy.
func (s *Store) logRecord(ctx context.Context, r *Record, err error) {
	level, msg := slog.LevelInfo, "audit record"
	if r.Outcome != OutcomeSucceeded {
		level = slog.LevelWarn
	}
	objs := make([]string, len(r.Objects))
	for i, o := range r.Objects {
		objs[i] = o.Group + "/" + o.Kind + " " + o.Namespace + "/" + o.Name
	}
	prev := ""
	if r.Chain != nil {
		prev = r.Chain.Prev
	}
	attrs := []slog.Attr{
		slog.String("id", r.ID),
		slog.Time("time", r.Time),
		slog.Duration("duration", r.Duration.std()),
		slog.Group("actor", slog.String("email", r.Actor.Email), slog.String("subject", r.Actor.Subject), slog.Any("groups", r.Actor.Groups)),
		slog.String("verb", string(r.Verb)),
		slog.String("cluster", r.Cluster),
		slog.String("environment", r.Environment),
		slog.String("namespace", r.Namespace),
		slog.String("app", r.App),
		slog.String("commit", r.Commit),
		slog.String("renderedDigest", r.RenderedDigest),
		slog.String("outcome", string(r.Outcome)),
		slog.String("message", r.Message),
		slog.String("breakGlass", r.BreakGlass),
		slog.Any("blockers", r.Blockers),
		slog.Any("objects", objs),
		slog.String("chain.prev", prev),
	}
	if err != nil {
		level, msg = slog.LevelError, "audit record not stored"
		attrs = append(attrs, slog.String("err", err.Error()))
	}
	s.log.LogAttrs(ctx, level, msg, attrs...)
}
