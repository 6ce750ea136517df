package audit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/internal/sign"
)

// The signing key: a Secret deploy-web creates once in its namespace.
// Every record head and every stream head carries an HMAC-SHA256 of its
// stored bytes under this key, so someone who may edit ConfigMaps but not
// read this Secret can neither rewrite a record, nor re-chain the records
// after a deleted one, nor move a stream's head or retention boundary to
// hide a deletion: whatever they write fails its signature. Someone who
// can read the Secret can forge records; see docs/history-and-audit.md.
const (
	// KeySecretName is the Secret holding the key.
	KeySecretName = "deploy-web-audit-key"
	// keySecretField is the Secret's data key.
	keySecretField = "hmac-sha256"

	// AnnotationMAC on a record head or a stream head is the HMAC of its
	// record (AnnotationRecord) or state (AnnotationStream) annotation.
	AnnotationMAC = "deploy-web.hanzo.ai/audit-mac"

	// Domains keep a record's MAC from being valid as a stream head's.
	macDomainRecord = "deploy-web audit record mac v1\n"
	macDomainStream = "deploy-web audit stream mac v1\n"
)

// SigningKey is the key the records are signed with (sign.Keys): the
// freezes, pauses and promotion requests (internal/cmstore) are signed
// with it too, so one Secret guards all of deploy-web's stored state.
func (s *Store) SigningKey(ctx context.Context) (*sign.Key, error) { return s.signingKey(ctx) }

// signingKey returns the store's key: Options.Key, or the key of the
// Secret KeySecretName in the store's namespace, created (32 random
// bytes) when it does not exist yet. Two replicas creating it at once
// both end with the one that was stored.
func (s *Store) signingKey(ctx context.Context) (*sign.Key, error) {
	if g := s.sig.Load(); g != nil {
		return g, nil
	}
	secrets := s.kube.Secrets(s.ns)
	sec, err := secrets.Get(ctx, KeySecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		raw := make([]byte, sign.MinKeyBytes)
		if _, err := rand.Read(raw); err != nil {
			return nil, fmt.Errorf("audit: signing key: %w", err)
		}
		// As text (base64 of 32 random bytes), as the install guide's
		// command makes it: no whitespace to trim at either end.
		key := []byte(base64.StdEncoding.EncodeToString(raw))
		sec, err = secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: KeySecretName, Namespace: s.ns,
				Labels: map[string]string{LabelManagedBy: managedBy, LabelComponent: ComponentKey}},
			Data: map[string][]byte{keySecretField: key}, Immutable: ptrTrue(), Type: corev1.SecretTypeOpaque,
		}, metav1.CreateOptions{FieldManager: managedBy})
		if apierrors.IsAlreadyExists(err) {
			sec, err = secrets.Get(ctx, KeySecretName, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("audit: read the signing key, Secret %s/%s (needs secrets get on it, and create once): %w", s.ns, KeySecretName, err)
	}
	// Trimmed as serve trims its --audit-key-file: the same Secret read
	// either way is the same key.
	key := bytes.TrimSpace(sec.Data[keySecretField])
	g, err := sign.NewKey(key)
	if err != nil {
		return nil, fmt.Errorf("audit: Secret %s/%s: %s holds %d bytes, want at least %d: delete the Secret (every record signed with it is then flagged) or restore it", s.ns, KeySecretName, keySecretField, len(key), sign.MinKeyBytes)
	}
	s.sig.Store(g)
	return g, nil
}
