package audit

import (
	"context"
	"fmt"

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
	// KeySecretName is the Secret holding the key (sign.FromSecret reads
	// and creates it).
	KeySecretName = sign.SecretName
	// keySecretField is the Secret's data key.
	keySecretField = sign.SecretField

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
	g, err := sign.FromSecret(ctx, s.kube, s.ns, map[string]string{LabelManagedBy: managedBy, LabelComponent: ComponentKey})
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	s.sig.Store(g)
	return g, nil
}
