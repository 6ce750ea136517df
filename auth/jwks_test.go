package auth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// TestForgedBearerTokensFetchKeysBoundedly: a flood of bearer tokens that
// no key of the IdP verifies (a forged signature under the IdP's kid, an
// unknown kid, garbage signature bytes, no kid) is refused without asking
// the IdP for its keys again: at most one JWKS request per jwksMinRefetch,
// shared by every request. A valid token keeps verifying from the cache,
// and a real key rotation is accepted once the interval has passed.
func TestForgedBearerTokensFetchKeysBoundedly(t *testing.T) {
	env := newTestServer(t)
	jwksRequests := func() int {
		env.idp.mu.Lock()
		defer env.idp.mu.Unlock()
		return env.idp.jwksRequests
	}
	status := func(token string) int {
		req := request(http.MethodGet, "/v1/deploy/applications", nil, nil, "Authorization", "Bearer "+token)
		return serveRequire(env.auth, req).StatusCode
	}
	valid := env.idp.mint(nil)
	if got := status(valid); got != http.StatusOK {
		t.Fatalf("valid bearer token: status %d, want 200", got)
	}
	if n := jwksRequests(); n != 1 {
		t.Fatalf("JWKS requests after the first token = %d, want 1", n)
	}

	var forged []string
	claims := env.idp.defaultClaims()
	header, payload, _ := strings.Cut(valid, ".")
	payload, _, _ = strings.Cut(payload, ".")
	for i := range 50 {
		for _, kid := range []string{"test-key", fmt.Sprintf("unknown-%d", i), ""} {
			tok, err := signJWTWithKid(otherRSAKey(), kid, claims)
			if err != nil {
				t.Fatal(err)
			}
			forged = append(forged, tok)
		}
		garbage := make([]byte, 256)
		rand.Read(garbage)
		forged = append(forged, header+"."+payload+"."+base64.RawURLEncoding.EncodeToString(garbage))
	}
	// flood sends every forged token twice: one after the other, then all
	// at once.
	flood := func() {
		t.Helper()
		statuses := make([]int, 2*len(forged))
		for i, tok := range forged {
			statuses[i] = status(tok)
		}
		var wg sync.WaitGroup
		for i, tok := range forged {
			wg.Go(func() { statuses[len(forged)+i] = status(tok) })
		}
		wg.Wait()
		for i, got := range statuses {
			if got != http.StatusUnauthorized {
				t.Errorf("forged token %d: status %d, want 401", i%len(forged), got)
			}
		}
	}

	flood()
	if n := jwksRequests(); n != 1 {
		t.Errorf("JWKS requests after %d forged tokens = %d, want still 1 (keys fetched less than %s ago)", 2*len(forged), n, jwksMinRefetch)
	}
	env.clock.Advance(jwksMinRefetch)
	flood()
	if n := jwksRequests(); n != 2 {
		t.Errorf("JWKS requests after %d more forged tokens, %s later = %d, want 2 (one shared refetch)", 2*len(forged), jwksMinRefetch, n)
	}
	if got := status(valid); got != http.StatusOK {
		t.Errorf("valid bearer token after the flood: status %d, want 200", got)
	}

	// A rotation: the new kid waits for the interval, then is fetched once.
	env.idp.rotateKey(otherRSAKey(), "rotated")
	rotated := env.idp.mint(nil)
	if got := status(rotated); got != http.StatusUnauthorized {
		t.Errorf("token of a rotated key within %s of the last fetch: status %d, want 401", jwksMinRefetch, got)
	}
	env.clock.Advance(jwksMinRefetch)
	for range 3 {
		if got := status(rotated); got != http.StatusOK {
			t.Errorf("token of a rotated key after %s: status %d, want 200", jwksMinRefetch, got)
		}
	}
	if n := jwksRequests(); n != 3 {
		t.Errorf("JWKS requests after the rotation = %d, want 3", n)
	}
}

// TestKeySetFetch: the JWKS is read under its byte cap and status check;
// keys that could verify nothing (encryption keys, private keys, an
// algorithm the verifier does not take) are left out.
func TestKeySetFetch(t *testing.T) {
	pub := jose.JSONWebKey{Key: &testRSAKey().PublicKey, KeyID: "sig", Algorithm: string(jose.RS256), Use: "sig"}
	enc := jose.JSONWebKey{Key: &otherRSAKey().PublicKey, KeyID: "enc", Algorithm: string(jose.RS256), Use: "enc"}
	priv := jose.JSONWebKey{Key: otherRSAKey(), KeyID: "priv", Algorithm: string(jose.RS256), Use: "sig"}
	ps := jose.JSONWebKey{Key: &otherRSAKey().PublicKey, KeyID: "ps", Algorithm: string(jose.PS256), Use: "sig"}
	set := func(keys ...jose.JSONWebKey) string {
		b, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name     string
		status   int
		body     string
		wantKids []string
		wantErr  string
	}{
		{"keys", http.StatusOK, set(pub, enc, priv, ps), []string{"sig"}, ""},
		{"unknown key type", http.StatusOK, `{"keys":[{"kty":"OKP","crv":"X448","x":"AA"},` + strings.TrimPrefix(set(pub), `{"keys":[`), []string{"sig"}, ""},
		{"error status", http.StatusInternalServerError, set(pub), nil, "status 500"},
		{"too large", http.StatusOK, `{"keys":[],"pad":"` + strings.Repeat("x", jwksMaxBytes) + `"}`, nil, "more than"},
		{"not JSON", http.StatusOK, "<html>", nil, "auth: fetch the IdP's keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			keys, err := newKeySet(srv.URL, []string{oidc.RS256}, nil, time.Now).fetch()
			var kids []string
			for _, k := range keys {
				kids = append(kids, k.KeyID)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("fetch() = %v, %v; want an error containing %q", kids, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(kids, tt.wantKids) {
				t.Errorf("fetch() = %v, %v; want %v", kids, err, tt.wantKids)
			}
		})
	}
}

// onPath answers plain-http requests to host itself (an attacker on the
// path) and passes the rest to next.
type onPath struct {
	host, body string
	next       http.RoundTripper
}

func (o onPath) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "http" && r.URL.Host == o.host {
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{}, Body: io.NopCloser(strings.NewReader(o.body)), Request: r}, nil
	}
	return o.next.RoundTrip(r)
}

// TestKeySetRedirectToPlainHTTP: an https jwks_uri that redirects to
// plain http off loopback is not followed: whoever is on the path could
// answer with keys of their own and sign tokens.
func TestKeySetRedirectToPlainHTTP(t *testing.T) {
	forged := jose.JSONWebKey{Key: &otherRSAKey().PublicKey, KeyID: "forged", Algorithm: string(jose.RS256), Use: "sig"}
	body, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{forged}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://keys.example/jwks", http.StatusFound)
	}))
	defer srv.Close()
	client := srv.Client()
	client.Transport = onPath{host: "keys.example", body: string(body), next: client.Transport}
	keys, err := newKeySet(srv.URL+"/jwks", []string{oidc.RS256}, client, time.Now).fetch()
	if err == nil || !strings.Contains(err.Error(), "plain http") {
		t.Errorf("fetch() through a redirect to http://keys.example = %d keys, %v; want an error saying plain http", len(keys), err)
	}
	if client.CheckRedirect != nil {
		t.Error("newKeySet changed the caller's client")
	}
}

// TestIdPClientRedirectToPlainHTTP: the client of every other request to
// the IdP (discovery, token exchange and refresh, userinfo, revocation)
// holds redirects to the same rule: a token endpoint that answers 307 to
// plain http off loopback would have the form, client secret included,
// re-sent in the clear.
func TestIdPClientRedirectToPlainHTTP(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://token.example/token", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	client := srv.Client()
	reached := false
	tls := client.Transport
	client.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "token.example" {
			reached = true
		}
		return onPath{host: "token.example", body: `{"access_token":"x"}`, next: tls}.RoundTrip(r)
	})
	resp, err := idpClient(Config{HTTPClient: client}).Post(srv.URL+"/token", "application/x-www-form-urlencoded", strings.NewReader("client_secret=s3cret"))
	if err == nil {
		resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "plain http") || reached {
		t.Errorf("POST through a 307 to http://token.example: err = %v, reached = %v; want an error saying plain http and no request there", err, reached)
	}
	if client.CheckRedirect != nil {
		t.Error("idpClient changed the caller's client")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
