// Package cmstore keeps one JSON document in one key of a ConfigMap,
// signed: the store skeleton of deploy-web's small state stores (the
// freezes, the auto-sync pauses, the promotion requests). A read checks
// the signature before it decodes; a write is a compare-and-swap
// (internal/cmcas) that stores the document and its signature in one
// update. The signature is the audit records' HMAC (internal/sign) under
// the same key, in a domain of its own that names the ConfigMap and key,
// so a document signed for one store is not valid in another, and an
// audit record's MAC is not valid for either.
//
// What a signature proves: deploy-web wrote these bytes. A document
// edited by hand (kubectl edit), or written by a deploy-web before state
// was signed, reads as *TamperedError, and the stores' callers fail
// closed on it. What it does not prove: that the bytes are the newest
// deploy-web wrote. Someone who may edit ConfigMaps can put back an
// older signed document, or delete the ConfigMap (no document at all);
// each change to these stores is also an audit record, whose chain does
// show what happened (docs/security.md).
package cmstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/cmcas"
	"github.com/hanzoai/deploy-web/internal/labels"
	"github.com/hanzoai/deploy-web/internal/sign"
)

// LabelKind marks deploy-web's own ConfigMaps; its value names the store.
const LabelKind = labels.Kind

// AnnotationMAC on a store's ConfigMap is the signature of its key's
// value.
const AnnotationMAC = "deploy-web.hanzo.ai/state-mac"

// readSlack is how much larger than Spec.MaxBytes a stored value may be
// before a read refuses it without checking its signature.
const readSlack = 100 << 10

// Spec says where a store keeps its document and how large it may be.
type Spec struct {
	// Owner prefixes the errors ("freeze").
	Owner string
	// What names the state for people ("deploy freezes").
	What string
	// Namespace and Name of the ConfigMap, Key its data key.
	Namespace, Name, Key string
	// Kind is the ConfigMap's LabelKind value.
	Kind string
	// MaxBytes is the most a write stores (a ConfigMap holds 1 MiB).
	MaxBytes int
}

// Store is the signed document of type T in one ConfigMap key. It is
// safe for concurrent use, by one replica or many.
type Store[T any] struct {
	cms  typedcorev1.ConfigMapsGetter
	keys sign.Keys
	spec Spec
}

// New returns the store of spec; keys gives the signing key (audit.Store,
// or sign.Static).
func New[T any](cms typedcorev1.ConfigMapsGetter, keys sign.Keys, spec Spec) *Store[T] {
	return &Store[T]{cms: cms, keys: keys, spec: spec}
}

// Spec is the store's spec.
func (s *Store[T]) Spec() Spec { return s.spec }

func (s *Store[T]) key() cmcas.Key {
	return cmcas.Key{Owner: s.spec.Owner, Namespace: s.spec.Namespace, Name: s.spec.Name, Key: s.spec.Key,
		Labels: map[string]string{LabelKind: s.spec.Kind}, FieldManager: appcr.FieldManager, MACAnnotation: AnnotationMAC}
}

// domain is the MAC domain of the store's document.
func (s *Store[T]) domain() string {
	return "deploy-web state mac v1 " + s.spec.Namespace + "/" + s.spec.Name + "/" + s.spec.Key + "\n"
}

// Get returns the stored document; ok is false when there is none (no
// ConfigMap, or no key). A document whose signature is missing or does
// not match is a *TamperedError; one that is signed but does not decode
// strictly (a newer deploy-web's) is a *GarbledError.
func (s *Store[T]) Get(ctx context.Context) (doc T, ok bool, err error) {
	e, err := cmcas.GetEntry(ctx, s.cms, s.key())
	if err != nil {
		return doc, false, err
	}
	return s.open(ctx, e)
}

// open checks and decodes a stored entry.
func (s *Store[T]) open(ctx context.Context, e cmcas.Entry) (doc T, ok bool, err error) {
	if !e.OK {
		return doc, false, nil
	}
	if len(e.Value) > s.spec.MaxBytes+readSlack {
		return doc, false, s.tampered(false, fmt.Sprintf("%d bytes, more than the store writes", len(e.Value)))
	}
	if e.MAC == "" {
		return doc, false, s.tampered(true, "no signature")
	}
	g, err := s.keys.SigningKey(ctx)
	if err != nil {
		return doc, false, fmt.Errorf("%s: check %s: %w", s.spec.Owner, s.where(), err)
	}
	if !g.Verify(s.domain(), []byte(e.Value), e.MAC) {
		return doc, false, s.tampered(false, "the signature does not match")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(e.Value)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return doc, false, &GarbledError{Where: s.where(), Err: err}
	}
	return doc, true, nil
}

// Update applies change to the stored document (the zero T when there
// is none) and stores what it returns, signed, by compare-and-swap: a
// conflict starts over from a fresh read (change is called once per
// attempt). A stored document that does not check is not built upon: its
// *TamperedError is returned and nothing is written. change may return
// cmcas.ErrUnchanged to end without a write; a document larger than
// Spec.MaxBytes is a *TooLargeError.
func (s *Store[T]) Update(ctx context.Context, change func(cur T) (T, error)) error {
	g, err := s.keys.SigningKey(ctx)
	if err != nil {
		return fmt.Errorf("%s: sign %s: %w", s.spec.Owner, s.where(), err)
	}
	return cmcas.UpdateEntry(ctx, s.cms, s.key(), func(e cmcas.Entry) (cmcas.Entry, error) {
		cur, _, err := s.open(ctx, e)
		if err != nil {
			return cmcas.Entry{}, err
		}
		next, err := change(cur)
		if err != nil {
			return cmcas.Entry{}, err
		}
		data, err := json.Marshal(next)
		if err != nil {
			return cmcas.Entry{}, fmt.Errorf("%s: encode: %w", s.spec.Owner, err)
		}
		if len(data) > s.spec.MaxBytes {
			return cmcas.Entry{}, &TooLargeError{What: s.spec.What, Bytes: len(data), Max: s.spec.MaxBytes}
		}
		return cmcas.Entry{Value: string(data), OK: true, MAC: g.MAC(s.domain(), data)}, nil
	})
}

// Sign is the entry a write of raw would store: raw and its signature.
// Tests use it to write the ConfigMap as another replica would.
func (s *Store[T]) Sign(ctx context.Context, raw []byte) (cmcas.Entry, error) {
	g, err := s.keys.SigningKey(ctx)
	if err != nil {
		return cmcas.Entry{}, err
	}
	return cmcas.Entry{Value: string(raw), OK: true, MAC: g.MAC(s.domain(), raw)}, nil
}

func (s *Store[T]) where() string {
	return fmt.Sprintf("ConfigMap %s/%s key %s", s.spec.Namespace, s.spec.Name, s.spec.Key)
}

func (s *Store[T]) tampered(unsigned bool, why string) *TamperedError {
	return &TamperedError{What: s.spec.What, Namespace: s.spec.Namespace, Name: s.spec.Name, Unsigned: unsigned, why: why}
}

// TamperedError is a stored document deploy-web did not write as it is:
// edited by hand, or (Unsigned) written without a signature, by hand or
// by a deploy-web from before state was signed. Its callers fail closed.
type TamperedError struct {
	// What the state is ("deploy freezes"); the ConfigMap that holds it.
	What            string
	Namespace, Name string
	// Unsigned: there is no signature at all.
	Unsigned bool
	why      string
}

func (e *TamperedError) Error() string {
	return fmt.Sprintf("cmstore: ConfigMap %s/%s (%s): %s: changed outside deploy-web", e.Namespace, e.Name, e.What, e.why)
}

// Public is the text people see: what happened and how an operator
// mends it (docs/security.md, "Signed state").
func (e *TamperedError) Public() string {
	how := "was changed outside deploy-web (its signature does not match)"
	if e.Unsigned {
		how = "carries no signature (edited by hand, or written by a deploy-web from before state was signed)"
	}
	return fmt.Sprintf("the %s in ConfigMap %s/%s %s, so deploy-web does not trust it; an operator reviews it and deletes the ConfigMap (kubectl -n %s delete configmap %s), then sets again what should stand (docs/security.md, Signed state)",
		e.What, e.Namespace, e.Name, how, e.Namespace, e.Name)
}

// IsTampered reports whether err is (or wraps) a *TamperedError, and
// returns it.
func IsTampered(err error) (*TamperedError, bool) {
	var te *TamperedError
	ok := errors.As(err, &te)
	return te, ok
}

// GarbledError is a signed document that does not decode (written by
// another version of deploy-web).
type GarbledError struct {
	Where string
	Err   error
}

func (e *GarbledError) Error() string {
	return fmt.Sprintf("cmstore: %s: %v (signed, but not in the form this deploy-web reads: another version wrote it?)", e.Where, e.Err)
}
func (e *GarbledError) Unwrap() error { return e.Err }

// TooLargeError refuses a document larger than the store holds.
type TooLargeError struct {
	What       string
	Bytes, Max int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("cmstore: the %s would take %d bytes, more than %d", e.What, e.Bytes, e.Max)
}
