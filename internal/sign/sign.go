// Package sign is deploy-web's one signing function: an HMAC-SHA256 of
// stored bytes under the namespace's key (the Secret deploy-web-audit-key,
// or --audit-key-file), in a domain so that a MAC made for one kind of
// thing is never valid for another. The audit records and stream heads
// (audit/) and the small state stores (internal/cmstore: freezes, pauses,
// promotion requests) all sign and check with it.
package sign

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
)

// MinKeyBytes is the least key length accepted (and the size of a key
// deploy-web creates).
const MinKeyBytes = 32

// prefix starts every MAC, naming its algorithm.
const prefix = "hmac-sha256:"

// Key signs and checks bytes. The zero Key is not usable: use NewKey.
type Key struct{ key []byte }

// NewKey returns a Key of key (copied); at least MinKeyBytes.
func NewKey(key []byte) (*Key, error) {
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("sign: a signing key of %d bytes: want at least %d", len(key), MinKeyBytes)
	}
	return &Key{key: slices.Clone(key)}, nil
}

// MAC is the MAC of raw in domain: "hmac-sha256:" and 64 hex digits.
func (k *Key) MAC(domain string, raw []byte) string {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(domain))
	m.Write(raw)
	return prefix + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether got is the MAC of raw in domain, in constant
// time.
func (k *Key) Verify(domain string, raw []byte, got string) bool {
	return hmac.Equal([]byte(k.MAC(domain, raw)), []byte(got))
}

// Equal reports whether k and o are the same key.
func (k *Key) Equal(o *Key) bool { return o != nil && hmac.Equal(k.key, o.key) }

// Len is the key's length in bytes.
func (k *Key) Len() int { return len(k.key) }

// Keys gives the key when it is needed (audit.Store reads it from its
// Secret once; Static holds one).
type Keys interface {
	SigningKey(ctx context.Context) (*Key, error)
}

// Static is a Keys of one key.
type Static struct{ Key *Key }

// SigningKey returns s.Key.
func (s Static) SigningKey(context.Context) (*Key, error) { return s.Key, nil }
