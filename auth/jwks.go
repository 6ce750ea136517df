package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// JWKS limits: the ID-token verifier fetches the IdP's signing keys at most
// once per jwksMinRefetch, each fetch under jwksTimeout and jwksMaxBytes.
const (
	// jwksMinRefetch is the least time between two fetches of the JWKS. A
	// token that no cached key verifies (a new kid after a key rotation,
	// or a forged token) fetches the keys again only once this much time
	// has passed since the last fetch, successful or not; until then it
	// is refused from the cache. A flood of forged bearer tokens thus
	// costs the IdP one request per jwksMinRefetch, whatever its size,
	// and a rotated key is accepted at most jwksMinRefetch after its
	// first token arrives.
	jwksMinRefetch = 30 * time.Second
	// jwksTimeout bounds one fetch of the JWKS.
	jwksTimeout = 10 * time.Second
	// jwksMaxBytes bounds the JWKS document read.
	jwksMaxBytes = 1 << 20
)

// signingAlgs are the ID-token signature algorithms go-oidc verifies, in
// its order; the verifier accepts those of them the IdP's discovery
// advertises (RS256 when it advertises none).
func signingAlgs() []string {
	return []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}
}

// keySet is the verifier's oidc.KeySet: the IdP's signing keys from
// jwks_uri, cached, refetched for a token no cached key verifies at most
// once per jwksMinRefetch (go-oidc's RemoteKeySet refetches for every such
// token, so each forged bearer token would cost a request to the IdP).
// Concurrent misses share one fetch. It is safe for concurrent use.
type keySet struct {
	url    string
	algs   []jose.SignatureAlgorithm
	client *http.Client
	now    func() time.Time

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time     // start of the last fetch; zero before the first
	inflight  chan struct{} // closed when the running fetch ends; nil when none runs
	lastErr   error         // of the last fetch
}

// newKeySet returns the key set of jwksURL, verifying signatures of algs;
// a nil client is one bounded by jwksTimeout.
func newKeySet(jwksURL string, algs []string, client *http.Client, now func() time.Time) *keySet {
	if client == nil {
		client = &http.Client{Timeout: jwksTimeout}
	}
	// Discovery checked jwks_uri (https off loopback); a redirect is held
	// to the same rule, or a redirect to plain http would take the
	// signing keys from anyone on the path.
	c := secureRedirects(client, "jwks_uri redirect")
	ks := &keySet{url: jwksURL, client: c, now: now}
	for _, a := range algs {
		ks.algs = append(ks.algs, jose.SignatureAlgorithm(a))
	}
	return ks
}

// VerifySignature returns the payload of jwt if a key of the IdP verifies
// its signature. The verifier has checked its algorithm before.
func (ks *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSigned(jwt, ks.algs)
	if err != nil {
		return nil, fmt.Errorf("auth: malformed jwt: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("auth: the jwt does not carry exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	ks.mu.Lock()
	keys := ks.keys
	ks.mu.Unlock()
	if payload, ok := verifyWith(jws, kid, keys); ok {
		return payload, nil
	}
	done, next := ks.refresh()
	if done == nil {
		return nil, fmt.Errorf("auth: no key of the IdP verifies the token (its keys are fetched again for an unknown one at most every %s; next at %s)", jwksMinRefetch, next.Format(time.RFC3339))
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-done:
	}
	ks.mu.Lock()
	keys, ferr := ks.keys, ks.lastErr
	ks.mu.Unlock()
	if payload, ok := verifyWith(jws, kid, keys); ok {
		return payload, nil
	}
	if ferr != nil {
		return nil, ferr
	}
	return nil, errors.New("auth: no key of the IdP verifies the token")
}

// verifyWith verifies jws with the keys of kid (every key when the token
// names none).
func verifyWith(jws *jose.JSONWebSignature, kid string, keys []jose.JSONWebKey) ([]byte, bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// refresh starts a fetch of the keys unless one runs (it then returns
// that one) or the last started less than jwksMinRefetch ago (it then
// returns nil and when the next may start). The returned channel is closed
// when the fetch ends.
func (ks *keySet) refresh() (<-chan struct{}, time.Time) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.inflight != nil {
		return ks.inflight, time.Time{}
	}
	now := ks.now()
	if next := ks.fetchedAt.Add(jwksMinRefetch); !ks.fetchedAt.IsZero() && now.Before(next) {
		return nil, next
	}
	ks.fetchedAt = now
	done := make(chan struct{})
	ks.inflight = done
	// The fetch has its own deadline: a request that gives up waiting
	// does not cancel it for the others.
	go func() {
		keys, err := ks.fetch()
		ks.mu.Lock()
		if err == nil {
			ks.keys = keys
		}
		ks.lastErr = err
		ks.inflight = nil
		ks.mu.Unlock()
		close(done)
	}()
	return done, time.Time{}
}

// fetch reads the JWKS: one GET under jwksTimeout, at most jwksMaxBytes.
// Keys of a type or algorithm it cannot use, and private or encryption
// keys, are left out; they could verify nothing.
func (ks *keySet) fetch() ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(context.Background(), jwksTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, fmt.Errorf("auth: fetch the IdP's keys at %s: %w", ks.url, err)
	}
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: fetch the IdP's keys at %s: %w", ks.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("auth: fetch the IdP's keys at %s: %w", ks.url, err)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("auth: fetch the IdP's keys at %s: status %s", ks.url, resp.Status)
	case len(body) > jwksMaxBytes:
		return nil, fmt.Errorf("auth: fetch the IdP's keys at %s: more than %d bytes", ks.url, jwksMaxBytes)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("auth: fetch the IdP's keys at %s: %w", ks.url, err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if json.Unmarshal(raw, &k) != nil || !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") ||
			(k.Algorithm != "" && !slices.Contains(ks.algs, jose.SignatureAlgorithm(k.Algorithm))) {
			continue
		}
		keys = append(keys, k)
	}
	return keys, nil
}
