package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"
)

const (
	testClientID     = "deploy-web"
	testClientSecret = "s3cret"
)

// testRSAKey and otherRSAKey are generated once per test binary: 2048-bit
// generation is slow. otherRSAKey is a key the IdP does not publish.
var (
	testRSAKey  = sync.OnceValue(func() *rsa.PrivateKey { return mustRSAKey() })
	otherRSAKey = sync.OnceValue(func() *rsa.PrivateKey { return mustRSAKey() })
)

func mustRSAKey() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

// testIdP is a small OpenID Connect provider: discovery, JWKS, an
// authorization endpoint that grants every request, and a token endpoint
// that checks the client secret and PKCE verifier and returns an ID token
// whose claims the test chooses.
type testIdP struct {
	t   *testing.T
	srv *httptest.Server

	mu  sync.Mutex
	key *rsa.PrivateKey // signs ID tokens
	pub *rsa.PublicKey  // published in the JWKS
	kid string          // of pub, and in the header of signed tokens
	// jwksRequests counts the requests for the JWKS.
	jwksRequests int
	// claims are merged over the default claims of the next ID tokens;
	// a nil value deletes a claim.
	claims map[string]any
	// grants maps an issued code to its authorization request.
	grants map[string]url.Values
	// authRequests records every authorization request's query.
	authRequests []url.Values
	// endSession adds end_session_endpoint to discovery.
	endSession bool
	// editDiscovery, when set, edits the discovery document before it is
	// served (another issuer name, an endpoint elsewhere).
	editDiscovery func(doc map[string]any)
	// noRefresh: the token endpoint issues no refresh tokens.
	noRefresh bool
	// clientAuth, when set, is the one client authentication the token
	// endpoint takes (as Hydra's client of that token_endpoint_auth_method):
	// the other is invalid_client.
	clientAuth string
	// refreshStatus, when not 0, answers every refresh with this status
	// (400 invalid_grant: a disabled user; 503: an IdP that is down).
	refreshStatus int
	// refreshReply, when set, answers every refresh that refreshStatus
	// does not, leaving the token unused: a 429 with Retry-After, an error
	// code.
	refreshReply func(w http.ResponseWriter)
	// refreshSubject, when set, is the subject of refreshed ID tokens.
	refreshSubject string
	// refreshes maps each issued refresh token to whether it was used or
	// revoked; a used one presented again revokes the whole family, as
	// rotating IdPs do.
	refreshes map[string]bool
	// refreshCount counts refresh grants that reached the token endpoint;
	// revoked lists the tokens revoked at the revocation endpoint.
	refreshCount int
	revoked      []string
}

func newTestIdP(t *testing.T) *testIdP {
	t.Helper()
	p := &testIdP{t: t, key: testRSAKey(), pub: &testRSAKey().PublicKey, kid: "test-key", grants: map[string]url.Values{}, refreshes: map[string]bool{}}
	mux := http.NewServeMux()
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	// Routes are registered after p.srv is set: the mux's lock orders that
	// write before any handler reads p.srv.
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("POST /revoke", p.revoke)
	return p
}

func (p *testIdP) issuer() string { return p.srv.URL }

// setClaims sets the claims merged into the next ID tokens.
func (p *testIdP) setClaims(c map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claims = maps.Clone(c)
}

func (p *testIdP) discovery(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	endSession, edit := p.endSession, p.editDiscovery
	p.mu.Unlock()
	doc := map[string]any{
		"issuer":                                p.issuer(),
		"authorization_endpoint":                p.issuer() + "/authorize",
		"token_endpoint":                        p.issuer() + "/token",
		"jwks_uri":                              p.issuer() + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"revocation_endpoint":                   p.issuer() + "/revoke",
	}
	if endSession {
		doc["end_session_endpoint"] = p.issuer() + "/logout"
	}
	if edit != nil {
		edit(doc)
	}
	writeJSON(w, http.StatusOK, doc)
}

func (p *testIdP) jwks(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.jwksRequests++
	pub, kid := p.pub, p.kid
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{
		Key: pub, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig",
	}}})
}

// authorize grants every request: it redirects to redirect_uri with a code.
func (p *testIdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	p.authRequests = append(p.authRequests, q)
	code := rand.Text()
	p.grants[code] = q
	p.mu.Unlock()
	if q.Get("client_id") != testClientID || q.Get("response_type") != "code" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	to, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := url.Values{"code": {code}, "state": {q.Get("state")}}
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

// token exchanges a code: it checks the client credentials, the
// redirect_uri and that SHA-256(code_verifier) is the code_challenge.
func (p *testIdP) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	p.mu.Lock()
	only := p.clientAuth
	p.mu.Unlock()
	if (only == TokenAuthBasic && !ok) || (only == TokenAuthPost && ok) {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if id != testClientID || secret != testClientSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if r.PostForm.Get("grant_type") == "refresh_token" {
		p.refresh(w, r.PostForm.Get("refresh_token"))
		return
	}
	code := r.PostForm.Get("code")
	p.mu.Lock()
	grant, ok := p.grants[code]
	delete(p.grants, code)
	extra := maps.Clone(p.claims)
	p.mu.Unlock()
	switch {
	case r.PostForm.Get("grant_type") != "authorization_code" || !ok:
		oauthError(w, "invalid_grant")
		return
	case r.PostForm.Get("redirect_uri") != grant.Get("redirect_uri"):
		oauthError(w, "invalid_grant")
		return
	case grant.Get("code_challenge_method") != "S256":
		oauthError(w, "invalid_request")
		return
	}
	challenge := oauth2.S256ChallengeFromVerifier(r.PostForm.Get("code_verifier"))
	if subtle.ConstantTimeCompare([]byte(challenge), []byte(grant.Get("code_challenge"))) != 1 {
		oauthError(w, "invalid_grant")
		return
	}
	claims := p.defaultClaims()
	claims["nonce"] = grant.Get("nonce")
	for k, v := range extra {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	p.mu.Lock()
	key := p.key
	p.mu.Unlock()
	idToken, err := signJWT(key, claims)
	if err != nil {
		p.t.Errorf("token endpoint: sign: %v", err)
		http.Error(w, "sign", http.StatusInternalServerError)
		return
	}
	answer := map[string]any{
		"access_token": "access-" + code,
		"token_type":   "Bearer",
		"expires_in":   3600,
		"id_token":     idToken,
	}
	p.mu.Lock()
	if !p.noRefresh {
		rt := "rt-" + rand.Text()
		p.refreshes[rt] = false
		answer["refresh_token"] = rt
	}
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, answer)
}

// refresh answers a refresh grant: a fresh ID token with the current claims
// and a rotated refresh token.
func (p *testIdP) refresh(w http.ResponseWriter, rt string) {
	p.mu.Lock()
	p.refreshCount++
	status, subject, reply := p.refreshStatus, p.refreshSubject, p.refreshReply
	used, known := p.refreshes[rt]
	extra := maps.Clone(p.claims)
	key := p.key
	switch {
	case status != 0, reply != nil:
	case !known:
		status = http.StatusBadRequest
	case used:
		// Reuse of a used token: revoke every token (one family here).
		for k := range p.refreshes {
			p.refreshes[k] = true
		}
		status = http.StatusBadRequest
	default:
		p.refreshes[rt] = true
	}
	next := "rt-" + rand.Text()
	if status == 0 && reply == nil {
		p.refreshes[next] = false
	}
	p.mu.Unlock()
	switch {
	case status == http.StatusBadRequest:
		oauthError(w, "invalid_grant")
		return
	case status != 0:
		http.Error(w, "unavailable", status)
		return
	case reply != nil:
		reply(w)
		return
	}
	claims := p.defaultClaims()
	for k, v := range extra {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	if subject != "" {
		claims["sub"] = subject
	}
	idToken, err := signJWT(key, claims)
	if err != nil {
		p.t.Errorf("token endpoint: sign: %v", err)
		http.Error(w, "sign", http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  "access-" + next,
		"token_type":    "Bearer",
		"expires_in":    3600,
		"id_token":      idToken,
		"refresh_token": next,
	})
}

// revoke is the revocation endpoint (RFC 7009): it revokes the token.
func (p *testIdP) revoke(w http.ResponseWriter, r *http.Request) {
	if id, secret, ok := r.BasicAuth(); !ok || id != testClientID || secret != testClientSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request")
		return
	}
	tok := r.PostForm.Get("token")
	p.mu.Lock()
	if _, ok := p.refreshes[tok]; ok {
		p.refreshes[tok] = true
	}
	p.revoked = append(p.revoked, tok)
	p.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// set runs f with the IdP's lock held.
func (p *testIdP) set(f func(p *testIdP)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

// defaultClaims are the claims of a valid ID token of a superadmin.
func (p *testIdP) defaultClaims() map[string]any {
	now := time.Now()
	return map[string]any{
		"iss":    p.issuer(),
		"aud":    testClientID,
		"sub":    "alice-sub",
		"email":  "alice@example.com",
		"name":   "Alice",
		"groups": []string{"developers", "superadmin"},
		"iat":    now.Unix(),
		"exp":    now.Add(time.Hour).Unix(),
	}
}

// mint returns a signed ID token of the default claims with over merged in
// (a nil value deletes a claim).
func (p *testIdP) mint(over map[string]any) string {
	claims := p.defaultClaims()
	for k, v := range over {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	return p.sign(claims)
}

// sign signs claims with the IdP's signing key; call it from the test goroutine.
func (p *testIdP) sign(claims map[string]any) string {
	p.t.Helper()
	p.mu.Lock()
	key, kid := p.key, p.kid
	p.mu.Unlock()
	s, err := signJWTWithKid(key, kid, claims)
	if err != nil {
		p.t.Fatalf("signJWT: %v", err)
	}
	return s
}

// useSigningKey makes the IdP sign ID tokens with key (the JWKS still
// publishes the original public key under the same kid).
func (p *testIdP) useSigningKey(key *rsa.PrivateKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.key = key
}

// rotateKey makes the IdP sign with key under kid and publish only that
// key, as an IdP rotating its keys does.
func (p *testIdP) rotateKey(key *rsa.PrivateKey, kid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.key, p.pub, p.kid = key, &key.PublicKey, kid
}

// signJWT returns a compact RS256 JWS of claims with kid "test-key".
func signJWT(key *rsa.PrivateKey, claims map[string]any) (string, error) {
	return signJWTWithKid(key, "test-key", claims)
}

// signJWTWithKid returns a compact RS256 JWS of claims with kid.
func signJWTWithKid(key *rsa.PrivateKey, kid string, claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

func oauthError(w http.ResponseWriter, code string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// hasScope reports whether a space-separated scope list holds s.
func hasScope(scopes, s string) bool {
	for f := range strings.FieldsSeq(scopes) {
		if f == s {
			return true
		}
	}
	return false
}
