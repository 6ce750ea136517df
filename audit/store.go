package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/internal/sign"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Kube is what the store needs of a clientset; clientset.CoreV1()
// satisfies it. Secrets: the signing key only (KeySecretName).
type Kube interface {
	typedcorev1.ConfigMapsGetter
	typedcorev1.EventsGetter
	typedcorev1.SecretsGetter
}

// Options configure a Store.
type Options struct {
	// Namespace is deploy-web's namespace, where records live.
	Namespace string
	// Log receives one line per record; nil discards.
	Log *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Key signs and checks the records (at least 32 bytes); nil reads
	// it from the Secret KeySecretName, creating it once.
	Key []byte
	// Refusals, when set, counts every refused record appended against
	// its actor (the handlers ask it before a write: Limiter.Wait).
	Refusals *Limiter
}

// Store writes and reads the records of one namespace.
type Store struct {
	kube Kube
	meta metadata.Interface
	ns   string
	log  *slog.Logger
	now  func() time.Time
	// idx is the started index (Start); nil until then.
	idx atomic.Pointer[index]
	// sig is the signer, once the key is read (signingKey).
	sig atomic.Pointer[sign.Key]
	// refusals counts refused records per actor; nil counts none.
	refusals *Limiter
}

// configMaps is the resource the metadata client reads.
var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// New returns a store in opts.Namespace. meta reads metadata only (lists
// and the index never transfer manifests).
func New(kube Kube, meta metadata.Interface, opts Options) (*Store, error) {
	if opts.Namespace == "" {
		return nil, errors.New("audit: no namespace: records live in deploy-web's namespace")
	}
	s := &Store{kube: kube, meta: meta, ns: opts.Namespace, log: opts.Log, now: opts.Now, refusals: opts.Refusals}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if opts.Key != nil {
		g, err := sign.NewKey(opts.Key)
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		s.sig.Store(g)
	}
	return s, nil
}

// maxAppendAttempts bounds the races an append retries (another writer
// took the sequence number, or moved the stream head).
const maxAppendAttempts = 16

// maxEnvelopeBytes keeps a record's annotation under the API server's
// 256 KiB limit on a head's annotations.
const maxEnvelopeBytes = 200 << 10

// Append stores r as the next record of its stream and returns it as
// stored (ID and Chain set). It strips Secrets from r.Manifests, fills
// r.Objects from them when empty, and emits the record's Event and log
// line. An error means the record is not stored; its log line is written
// anyway, at error level. A refused record counts against its actor in
// Options.Refusals first (stored or not). The write is: the stream head read (created
// once), the parts (none under 900 KiB), the record, the head advanced,
// the Event.
func (s *Store) Append(ctx context.Context, r Record) (Record, error) {
	if r.Outcome == OutcomeRefused && s.refusals != nil {
		s.refusals.Refused(r.Actor)
	}
	out, err := s.appendRecord(ctx, r)
	if err != nil {
		s.logRecord(ctx, &r, err)
		return r, err
	}
	return out, nil
}

func (s *Store) appendRecord(ctx context.Context, r Record) (Record, error) {
	if err := s.prepare(&r); err != nil {
		return r, err
	}
	g, err := s.signingKey(ctx)
	if err != nil {
		return r, err
	}
	ref := manifestRef{}
	gz, err := encodeManifests(r.Manifests)
	switch {
	case err != nil:
		return r, err
	case len(gz) > MaxManifestBytes:
		ref.Omitted = fmt.Sprintf("the manifests compress to %d bytes, over the limit of %d", len(gz), MaxManifestBytes)
		gz = nil
	case len(r.Manifests) == 0:
		gz = nil
	}
	key := streamOf(&r)
	stream := key.id()
	for range maxAppendAttempts {
		headCM, st, err := s.head(ctx, stream, key, g)
		if err != nil {
			return r, err
		}
		seq := st.Seq + 1
		head, parts, hash, err := s.build(g, stream, seq, st.Hash, &r, gz, ref)
		if err != nil {
			return r, err
		}
		for _, p := range parts {
			if err := s.createPart(ctx, p); err != nil {
				return r, err
			}
		}
		created, err := s.kube.ConfigMaps(s.ns).Create(ctx, head, metav1.CreateOptions{FieldManager: managedBy})
		if apierrors.IsAlreadyExists(err) {
			// Another writer holds seq: chain after it. Our parts, if
			// any, are swept by retention once old.
			if err := s.catchUp(ctx, stream, key, g); err != nil {
				return r, err
			}
			continue
		}
		if err != nil {
			return r, fmt.Errorf("audit: store record %s: %w", head.Name, err)
		}
		// The record is stored; a head left behind is caught up by the
		// next append, so this error is logged, not returned.
		if err := s.updateHead(ctx, g, stream, key, headCM, func(st *streamState) bool {
			if st.Seq >= seq {
				return false
			}
			st.Seq, st.Hash = seq, hash
			return true
		}); err != nil {
			s.log.WarnContext(ctx, "audit: stream head not advanced; the next append catches up", "stream", stream, "seq", seq, "err", err)
		}
		rec := storedRecord(created, g)
		s.emit(ctx, &rec, created)
		return rec, nil
	}
	return r, fmt.Errorf("audit: append to stream %s: gave up after %d races with other writers; retry", stream, maxAppendAttempts)
}

// storedRecord is the record a head just written holds, its chain as
// the writer built it.
func storedRecord(cm *corev1.ConfigMap, g *sign.Key) Record {
	e := entryOf(cm, g)
	rec := e.env.Record
	rec.ID = idOf(e)
	rec.Chain = &Chain{Prev: e.env.Prev, OK: e.bad == "", Reason: e.bad}
	return rec
}

// prepare checks and bounds r before it is stored.
func (s *Store) prepare(r *Record) error {
	if !r.Verb.Valid() {
		return fmt.Errorf("audit: verb %q is not one of %v", r.Verb, Verbs())
	}
	if !r.Outcome.Valid() {
		return fmt.Errorf("audit: outcome %q is not succeeded, failed or refused", r.Outcome)
	}
	if r.Cluster == "" || (r.Environment == "" && r.App == "") {
		return errors.New("audit: a record names its cluster and its environment or App")
	}
	for name, v := range map[string]string{"cluster": r.Cluster, "environment": r.Environment, "namespace": r.Namespace,
		"app": r.App, "commit": r.Commit, "renderedDigest": r.RenderedDigest, "actor.email": r.Actor.Email, "actor.subject": r.Actor.Subject} {
		if len(v) > MaxFieldBytes {
			return fmt.Errorf("audit: %s is %d bytes, over the limit of %d", name, len(v), MaxFieldBytes)
		}
	}
	if r.Time.IsZero() {
		r.Time = s.now()
	}
	r.Time = r.Time.UTC()
	r.ID, r.Chain = "", nil
	// The text people read in a record, typed by people or cut from their
	// words, without format characters (bidi controls, zero-width).
	r.Message = cutUTF8(textfmt.Clean(r.Message, true), MaxMessageBytes)
	r.BreakGlass = cutUTF8(textfmt.Clean(r.BreakGlass, true), MaxBreakGlassBytes)
	r.Reason = cutUTF8(textfmt.Clean(r.Reason, true), MaxBreakGlassBytes)
	r.Action, r.Before, r.After = cutUTF8(textfmt.Clean(r.Action, false), MaxFieldBytes), cutUTF8(textfmt.Clean(r.Before, false), MaxFieldBytes), cutUTF8(textfmt.Clean(r.After, false), MaxFieldBytes)
	r.Actor.Email, r.Actor.Subject = textfmt.Clean(r.Actor.Email, false), textfmt.Clean(r.Actor.Subject, false)
	// Clones: the caller's slices are not changed.
	r.Actor.Groups = slices.Clone(cutList(r.Actor.Groups, MaxGroups))
	r.Blockers = slices.Clone(cutList(r.Blockers, MaxBlockers))
	if len(r.Objects) == 0 {
		r.Objects = make([]Object, 0, len(r.Manifests))
		for _, m := range r.Manifests {
			if m != nil {
				r.Objects = append(r.Objects, ObjectOf(m))
			}
		}
	}
	r.Objects = cutList(r.Objects, MaxObjects)
	for i, g := range r.Actor.Groups {
		r.Actor.Groups[i] = cutUTF8(textfmt.Clean(g, false), MaxFieldBytes)
	}
	for i, b := range r.Blockers {
		r.Blockers[i] = cutUTF8(textfmt.Clean(b, false), MaxFieldBytes)
	}
	return nil
}

// build makes the head and parts of record seq of stream, signed by g,
// and returns the record's hash.
func (s *Store) build(g *sign.Key, stream string, seq int64, prev string, r *Record, gz []byte, ref manifestRef) (*corev1.ConfigMap, []*corev1.ConfigMap, string, error) {
	id := recordID(stream, seq)
	rec := *r
	rec.ID, rec.Manifests = id, nil
	env := envelope{Version: envelopeVersion, Stream: stream, Seq: seq, Prev: prev, Record: rec, Manifests: ref}
	if gz != nil {
		env.Manifests.Bytes, env.Manifests.SHA256 = int64(len(gz)), sha256Hex(gz)
	}
	var raw []byte
	for {
		var err error
		raw, err = json.Marshal(env)
		if err != nil {
			return nil, nil, "", fmt.Errorf("audit: encode record %s: %w", id, err)
		}
		if len(raw)+len(gz) > SplitBytes && len(env.Manifests.Parts) == 0 && gz != nil {
			// Too large for one ConfigMap: the manifests go in parts.
			for i, p := range splitParts(gz) {
				h := sha256Hex(p)
				env.Manifests.Parts = append(env.Manifests.Parts, partRef{Name: partName(id, i, h[len("sha256:"):][:8]), Bytes: int64(len(p)), SHA256: h})
			}
			continue
		}
		if len(raw) <= maxEnvelopeBytes {
			break
		}
		if len(env.Record.Objects) == 0 {
			return nil, nil, "", fmt.Errorf("audit: record %s is %d bytes without its objects, over %d: shorten its message, blockers or groups", id, len(raw), maxEnvelopeBytes)
		}
		// The object list does not fit the annotation: keep half (the
		// manifests still hold every object).
		env.Record.Objects = env.Record.Objects[:len(env.Record.Objects)/2]
	}
	name := recordName(id)
	head := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: s.ns,
		Labels:      recordLabels(&env.Record, stream),
		Annotations: map[string]string{AnnotationRecord: string(raw), AnnotationMAC: g.MAC(macDomainRecord, raw)},
	}, Immutable: ptrTrue()}
	var parts []*corev1.ConfigMap
	if len(env.Manifests.Parts) == 0 {
		if gz != nil {
			head.BinaryData = map[string][]byte{keyManifests: gz}
		}
	} else {
		for i, p := range splitParts(gz) {
			parts = append(parts, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: env.Manifests.Parts[i].Name, Namespace: s.ns,
				Labels: map[string]string{LabelManagedBy: managedBy, LabelComponent: ComponentPart, LabelStream: stream, LabelRecord: id},
			}, BinaryData: map[string][]byte{keyManifests: p}, Immutable: ptrTrue()})
		}
	}
	return head, parts, recordHash(raw), nil
}

func ptrTrue() *bool { t := true; return &t }

// createPart creates p; one that exists already must hold the same bytes
// (a racing writer with the same manifests wrote it).
func (s *Store) createPart(ctx context.Context, p *corev1.ConfigMap) error {
	_, err := s.kube.ConfigMaps(s.ns).Create(ctx, p, metav1.CreateOptions{FieldManager: managedBy})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("audit: store record part %s: %w", p.Name, err)
		}
		return nil
	}
	got, err := s.kube.ConfigMaps(s.ns).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("audit: read record part %s: %w", p.Name, err)
	}
	if !bytes.Equal(got.BinaryData[keyManifests], p.BinaryData[keyManifests]) {
		return fmt.Errorf("audit: record part %s exists with other bytes: delete it (it belongs to no record) and retry", p.Name)
	}
	return nil
}

// head returns the state of a stream's head, creating the head on the
// stream's first record. A head that is missing while the stream has
// records, or that fails its signature, is rebuilt from the records
// (rebuiltState), which flags the point.
func (s *Store) head(ctx context.Context, stream string, key streamKey, g *sign.Key) (*corev1.ConfigMap, *streamState, error) {
	cms := s.kube.ConfigMaps(s.ns)
	name := streamHeadName(stream)
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		var st *streamState
		if st, err = s.rebuiltState(ctx, stream, key); err != nil {
			return nil, nil, err
		}
		cm, err = cms.Create(ctx, streamHead(s.ns, st, g), metav1.CreateOptions{FieldManager: managedBy})
		if apierrors.IsAlreadyExists(err) {
			cm, err = cms.Get(ctx, name, metav1.GetOptions{})
		}
	case err == nil && streamStateOf(cm, g) == nil:
		var st *streamState
		if st, err = s.rebuiltState(ctx, stream, key); err != nil {
			return nil, nil, err
		}
		next := streamHead(s.ns, st, g)
		next.ResourceVersion = cm.ResourceVersion
		cm, err = cms.Update(ctx, next, metav1.UpdateOptions{FieldManager: managedBy})
		if apierrors.IsConflict(err) {
			cm, err = cms.Get(ctx, name, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("audit: read stream head %s/%s: %w", s.ns, name, err)
	}
	st, err := checkHead(cm, key, g)
	return cm, st, err
}

// rebuiltState is the state of a stream head made anew: empty for a new
// stream; for a stream with records (its head deleted, or edited without
// the key) the newest record, marked RebuiltAfter so that the record
// after it is flagged: what was deleted with the head cannot be told.
func (s *Store) rebuiltState(ctx context.Context, stream string, key streamKey) (*streamState, error) {
	st := &streamState{Version: envelopeVersion, Stream: stream, Key: key}
	ix, err := s.load(ctx, streamSelector(stream))
	if err != nil {
		return nil, err
	}
	if n := ix.newest(stream); n != nil {
		st.Seq, st.Hash, st.RebuiltAfter = n.seq, n.hash, n.seq
		s.log.WarnContext(ctx, "audit: stream head missing or not signed: rebuilt from its newest record, which is flagged", "stream", stream, "seq", n.seq)
	}
	return st, nil
}

func checkHead(cm *corev1.ConfigMap, key streamKey, g *sign.Key) (*streamState, error) {
	st := streamStateOf(cm, g)
	if st == nil {
		return nil, fmt.Errorf("audit: stream head %s/%s holds no readable, signed %s annotation: delete it; the next append rebuilds it from the records", cm.Namespace, cm.Name, AnnotationStream)
	}
	if st.Key != key {
		return nil, fmt.Errorf("audit: stream head %s/%s belongs to another stream (%+v, not %+v)", cm.Namespace, cm.Name, st.Key, key)
	}
	return st, nil
}

func streamHead(ns string, st *streamState, g *sign.Key) *corev1.ConfigMap {
	raw, _ := json.Marshal(st)
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: streamHeadName(st.Stream), Namespace: ns,
		Labels:      map[string]string{LabelManagedBy: managedBy, LabelComponent: ComponentStream, LabelStream: st.Stream},
		Annotations: map[string]string{AnnotationStream: string(raw), AnnotationMAC: g.MAC(macDomainStream, raw)},
	}}
}

// updateHead changes a stream head by compare-and-swap: read (or start
// from cm, the head as last read, when not nil), mutate (false: nothing
// to write), update with the resourceVersion read; a conflict reads
// again.
func (s *Store) updateHead(ctx context.Context, g *sign.Key, stream string, key streamKey, cm *corev1.ConfigMap, mutate func(*streamState) bool) error {
	cms := s.kube.ConfigMaps(s.ns)
	for range maxAppendAttempts {
		if cm == nil {
			var err error
			if cm, err = cms.Get(ctx, streamHeadName(stream), metav1.GetOptions{}); err != nil {
				return fmt.Errorf("audit: read stream head %s: %w", streamHeadName(stream), err)
			}
		}
		st, err := checkHead(cm, key, g)
		if err != nil {
			return err
		}
		if !mutate(st) {
			return nil
		}
		next := streamHead(s.ns, st, g)
		next.ResourceVersion = cm.ResourceVersion
		_, err = cms.Update(ctx, next, metav1.UpdateOptions{FieldManager: managedBy})
		if apierrors.IsConflict(err) {
			cm = nil
			continue
		}
		if err != nil {
			return fmt.Errorf("audit: update stream head %s: %w", streamHeadName(stream), err)
		}
		return nil
	}
	return fmt.Errorf("audit: update stream head %s: gave up after %d conflicts", streamHeadName(stream), maxAppendAttempts)
}

// catchUp moves a stream head that lags behind its records (a writer won
// the race and has not advanced it yet, or stopped before it could, or
// the head was deleted) to the newest record.
func (s *Store) catchUp(ctx context.Context, stream string, key streamKey, g *sign.Key) error {
	ix, err := s.load(ctx, streamSelector(stream))
	if err != nil {
		return err
	}
	newest := ix.newest(stream)
	if newest == nil {
		return nil
	}
	return s.updateHead(ctx, g, stream, key, nil, func(st *streamState) bool {
		if st.Seq >= newest.seq {
			return false
		}
		st.Seq, st.Hash = newest.seq, newest.hash
		return true
	})
}

// cutUTF8 cuts s to at most n bytes on a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return strings.ToValidUTF8(s, "")
}

func cutList[T any](l []T, n int) []T {
	if len(l) > n {
		return l[:n:n]
	}
	return l
}
