// Package planstore keeps the history of plans and applies in the cluster,
// as ConfigMaps labelled per environment and bounded to the newest N, so any
// replica of the dashboard shows the same history and a restart loses
// nothing. It stores the report JSON as the plan engine wrote it (reports
// never hold Secret values) plus a few labels and annotations to list it
// without reading every report.
package planstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/labels"
)

// Labels and annotations of a stored entry.
const (
	LabelEnvironment = "deploy-web.hanzo.ai/environment"
	AnnotationUser   = "deploy-web.hanzo.ai/user"
	AnnotationAction = "deploy-web.hanzo.ai/action"
	AnnotationStatus = "deploy-web.hanzo.ai/conclusion"
	AnnotationTime   = "deploy-web.hanzo.ai/time"
	AnnotationSum    = "deploy-web.hanzo.ai/summary"
	AnnotationCommit = "deploy-web.hanzo.ai/commit"
	kindValue        = "plan-history"
)

// Entry is one stored plan or apply.
type Entry struct {
	ID          string    `json:"id"`
	Environment string    `json:"environment"`
	Action      string    `json:"action"` // "plan" or "apply"
	Conclusion  string    `json:"conclusion"`
	Summary     string    `json:"summary"`
	User        string    `json:"user"`
	Time        time.Time `json:"time"`
	// Commit is the source commit the plan rendered (and an apply
	// applied); "" for a local folder outside git or a run with no
	// report.
	Commit string `json:"commit,omitempty"`
}

// Store reads and writes the history in one namespace.
type Store struct {
	cms       typedcorev1.ConfigMapsGetter
	namespace string
	keep      int
	now       func() time.Time
}

// New returns a store in namespace keeping the newest keep entries per
// environment (default 20).
func New(cms typedcorev1.ConfigMapsGetter, namespace string, keep int) *Store {
	if keep <= 0 {
		keep = 20
	}
	return &Store{cms: cms, namespace: namespace, keep: keep, now: time.Now}
}

// ErrNotFound is returned for an entry that does not exist.
var ErrNotFound = errors.New("planstore: entry not found")

// Decompression limits: a stored file is at most MaxFileBytes once
// decompressed and an entry's files at most MaxEntryBytes together. Save
// refuses larger files; Get refuses (rather than truncates) an entry that
// decompresses to more, such as a gzip bomb written by someone else.
const (
	MaxFileBytes  = 16 << 20
	MaxEntryBytes = 32 << 20
)

// TooLargeError is an entry file over a decompression limit.
type TooLargeError struct {
	ID, File string
	// Limit is the limit crossed, in bytes.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("planstore: entry %s, file %s: decompresses to more than %d bytes", e.ID, e.File, e.Limit)
}

// Save stores an entry's files (for example "report.json" and
// "diffs.json"), gzip-compressed, and prunes the environment's history to
// the newest N. ConfigMaps hold at most 1 MiB: larger entries are refused.
func (s *Store) Save(ctx context.Context, e Entry, files map[string][]byte) (Entry, error) {
	if e.Environment == "" || !validLabel(e.Environment) {
		return e, fmt.Errorf("planstore: environment %q is not a valid label value", e.Environment)
	}
	if e.Time.IsZero() {
		e.Time = s.now()
	}
	e.Time = e.Time.UTC()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	e.ID = strings.ToLower(fmt.Sprintf("deploy-web-%s-%s-%s", e.Action, e.Time.Format("20060102-150405"), hex.EncodeToString(suffix)))
	data := map[string][]byte{}
	total := 0
	for name, content := range files {
		if len(content) > MaxFileBytes {
			return e, &TooLargeError{ID: e.ID, File: name, Limit: MaxFileBytes}
		}
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		if _, err := w.Write(content); err != nil {
			return e, fmt.Errorf("planstore: compress: %w", err)
		}
		if err := w.Close(); err != nil {
			return e, fmt.Errorf("planstore: compress: %w", err)
		}
		data[name+".gz"] = gz.Bytes()
		total += gz.Len()
	}
	if total > 900<<10 {
		return e, fmt.Errorf("planstore: entry too large to store (%d bytes compressed)", total)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: e.ID, Namespace: s.namespace,
			Labels: map[string]string{labels.Kind: kindValue, LabelEnvironment: e.Environment},
			Annotations: map[string]string{
				AnnotationUser: e.User, AnnotationAction: e.Action, AnnotationStatus: e.Conclusion,
				AnnotationTime: e.Time.Format(time.RFC3339Nano), AnnotationSum: truncate(e.Summary, 1000),
				AnnotationCommit: e.Commit,
			},
		},
		BinaryData: data,
	}
	if _, err := s.cms.ConfigMaps(s.namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: appcr.FieldManager}); err != nil {
		return e, fmt.Errorf("planstore: save: %w", err)
	}
	return e, s.prune(ctx, e.Environment)
}

// List returns an environment's entries, newest first.
func (s *Store) List(ctx context.Context, env string) ([]Entry, error) {
	sel := labels.Kind + "=" + kindValue
	if env != "" {
		sel += "," + LabelEnvironment + "=" + env
	}
	list, err := s.cms.ConfigMaps(s.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("planstore: list: %w", err)
	}
	out := make([]Entry, 0, len(list.Items))
	for _, cm := range list.Items {
		out = append(out, entryOf(&cm))
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

// LastApplied returns env's newest apply that applied (conclusion
// "applied"): what is live, and its commit. ok is false when env has
// none in the history.
func (s *Store) LastApplied(ctx context.Context, env string) (e Entry, ok bool, err error) {
	entries, err := s.List(ctx, env)
	if err != nil {
		return Entry{}, false, err
	}
	for _, e := range entries {
		if e.Action == "apply" && e.Conclusion == "applied" {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

// Get returns one entry and its files.
func (s *Store) Get(ctx context.Context, id string) (Entry, map[string][]byte, error) {
	cm, err := s.cms.ConfigMaps(s.namespace).Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && cm.Labels[labels.Kind] != kindValue {
		return Entry{}, nil, ErrNotFound
	}
	if err != nil {
		return Entry{}, nil, fmt.Errorf("planstore: get: %w", err)
	}
	files := map[string][]byte{}
	left := int64(MaxEntryBytes)
	keys := slices.Sorted(maps.Keys(cm.BinaryData))
	for _, key := range keys {
		name, ok := strings.CutSuffix(key, ".gz")
		if !ok {
			continue
		}
		b, err := gunzip(cm.BinaryData[key], min(MaxFileBytes, left))
		if errors.Is(err, errTooLarge) {
			limit := int64(MaxFileBytes)
			if left < limit {
				limit = MaxEntryBytes // the entry's total was crossed
			}
			return Entry{}, nil, &TooLargeError{ID: id, File: name, Limit: limit}
		}
		if err != nil {
			return Entry{}, nil, fmt.Errorf("planstore: read %s/%s: %w", id, name, err)
		}
		left -= int64(len(b))
		files[name] = b
	}
	return entryOf(cm), files, nil
}

var errTooLarge = errors.New("too large")

// gunzip decompresses gz, failing with errTooLarge past max bytes.
func gunzip(gz []byte, max int64) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, errTooLarge
	}
	return b, nil
}

func (s *Store) prune(ctx context.Context, env string) error {
	entries, err := s.List(ctx, env)
	if err != nil {
		return err
	}
	for _, e := range entries[min(s.keep, len(entries)):] {
		err := s.cms.ConfigMaps(s.namespace).Delete(ctx, e.ID, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("planstore: prune: %w", err)
		}
	}
	return nil
}

func entryOf(cm *corev1.ConfigMap) Entry {
	t, _ := time.Parse(time.RFC3339Nano, cm.Annotations[AnnotationTime])
	return Entry{
		ID: cm.Name, Environment: cm.Labels[LabelEnvironment], Action: cm.Annotations[AnnotationAction],
		Conclusion: cm.Annotations[AnnotationStatus], Summary: cm.Annotations[AnnotationSum],
		User: cm.Annotations[AnnotationUser], Time: t, Commit: cm.Annotations[AnnotationCommit],
	}
}

func validLabel(s string) bool {
	if len(s) > 63 {
		return false
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			(c == '-' || c == '_' || c == '.') && i > 0 && i < len(s)-1
		if !ok {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
