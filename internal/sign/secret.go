package sign

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/appcr"
)

// The key Secret: created once in deploy-web's namespace, read by every
// replica, the CLI and the demo (one definition of where the key lives).
const (
	// SecretName is the Secret holding the key.
	SecretName = "deploy-web-audit-key"
	// SecretField is the Secret's data key.
	SecretField = "hmac-sha256"
)

// FromSecret returns the key of Secret SecretName in namespace ns,
// creating it (32 random bytes, as base64 text, immutable) when it does
// not exist yet; labels are put on a Secret it creates. Two callers
// creating it at once both end with the one that was stored. The key is
// trimmed as serve trims its --audit-key-file: the same Secret read either
// way is the same key.
func FromSecret(ctx context.Context, secrets typedcorev1.SecretsGetter, ns string, labels map[string]string) (*Key, error) {
	api := secrets.Secrets(ns)
	sec, err := api.Get(ctx, SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		raw := make([]byte, MinKeyBytes)
		if _, err := rand.Read(raw); err != nil {
			return nil, fmt.Errorf("sign: signing key: %w", err)
		}
		key := []byte(base64.StdEncoding.EncodeToString(raw))
		immutable := true
		sec, err = api.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: ns, Labels: labels},
			Data:       map[string][]byte{SecretField: key}, Immutable: &immutable, Type: corev1.SecretTypeOpaque,
		}, metav1.CreateOptions{FieldManager: appcr.FieldManager})
		if apierrors.IsAlreadyExists(err) {
			sec, err = api.Get(ctx, SecretName, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sign: read the signing key, Secret %s/%s (needs secrets get on it, and create once): %w", ns, SecretName, err)
	}
	key := bytes.TrimSpace(sec.Data[SecretField])
	g, err := NewKey(key)
	if err != nil {
		return nil, fmt.Errorf("sign: Secret %s/%s: %s holds %d bytes, want at least %d: delete the Secret (every record signed with it is then flagged) or restore it", ns, SecretName, SecretField, len(key), MinKeyBytes)
	}
	return g, nil
}

// SecretKeys is Keys read from the key Secret in Namespace (FromSecret),
// for a caller that has no audit store (the demo's seeding).
type SecretKeys struct {
	Secrets   typedcorev1.SecretsGetter
	Namespace string
	Labels    map[string]string
}

// SigningKey implements Keys.
func (s SecretKeys) SigningKey(ctx context.Context) (*Key, error) {
	return FromSecret(ctx, s.Secrets, s.Namespace, s.Labels)
}
