package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIsAdmin(t *testing.T) {
	tests := []struct {
		name   string
		claims map[string]any
		claim  string
		value  string
		want   bool
	}{
		{"string equal", map[string]any{"groups": "superadmin"}, "groups", "superadmin", true},
		{"string differs", map[string]any{"groups": "superadmins"}, "groups", "superadmin", false},
		{"string case differs", map[string]any{"groups": "SuperAdmin"}, "groups", "superadmin", false},
		{"[]any contains", map[string]any{"groups": []any{"dev", "superadmin"}}, "groups", "superadmin", true},
		{"[]any lacks", map[string]any{"groups": []any{"dev", "ops"}}, "groups", "superadmin", false},
		{"[]any non-strings", map[string]any{"groups": []any{1.0, true, nil, map[string]any{"superadmin": true}}}, "groups", "superadmin", false},
		{"[]string contains", map[string]any{"groups": []string{"superadmin"}}, "groups", "superadmin", true},
		{"[]string lacks", map[string]any{"groups": []string{"dev"}}, "groups", "superadmin", false},
		{"empty list", map[string]any{"groups": []any{}}, "groups", "superadmin", false},
		{"bool true", map[string]any{"isAdmin": true}, "isAdmin", "true", true},
		{"bool false", map[string]any{"isAdmin": false}, "isAdmin", "true", false},
		{"bool false with value false", map[string]any{"isAdmin": false}, "isAdmin", "false", false},
		{"bool true with other value", map[string]any{"isAdmin": true}, "isAdmin", "yes", false},
		{"string true", map[string]any{"isAdmin": "true"}, "isAdmin", "true", true},
		{"number", map[string]any{"level": 1.0}, "level", "1", false},
		{"object", map[string]any{"groups": map[string]any{"superadmin": true}}, "groups", "superadmin", false},
		{"null", map[string]any{"groups": nil}, "groups", "superadmin", false},
		{"missing claim", map[string]any{"roles": "superadmin"}, "groups", "superadmin", false},
		{"nil claims", nil, "groups", "superadmin", false},
		{"empty value never matches", map[string]any{"groups": ""}, "groups", "", false},
		{"empty value in list", map[string]any{"groups": []any{""}}, "groups", "", false},
		{"empty claim name", map[string]any{"": "superadmin"}, "", "superadmin", false},
		{"email verified", map[string]any{"email": "ada@example.com", "email_verified": true}, "email", "ada@example.com", true},
		{"email unverified", map[string]any{"email": "ada@example.com", "email_verified": false}, "email", "ada@example.com", false},
		{"email without email_verified", map[string]any{"email": "ada@example.com"}, "email", "ada@example.com", false},
		{"email_verified as a string", map[string]any{"email": "ada@example.com", "email_verified": "true"}, "email", "ada@example.com", false},
		{"email verified, another address", map[string]any{"email": "eve@example.com", "email_verified": true}, "email", "ada@example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsAdmin(tt.claims, tt.claim, tt.value); got != tt.want {
				t.Errorf("IsAdmin(%v, %q, %q) = %v, want %v", tt.claims, tt.claim, tt.value, got, tt.want)
			}
		})
	}
}

// TestAdminClaimValue checks the stored admin-claim value keeps IsAdmin's
// answer, including for a list too long for a cookie.
func TestAdminClaimValue(t *testing.T) {
	a := &Auth{cfg: Config{AdminClaim: "groups", AdminValue: "superadmin"}}
	many := make([]any, 0, 300)
	for i := range 300 {
		many = append(many, strings.Repeat("g", 20)+string(rune('a'+i%26)))
	}
	tests := []struct {
		name      string
		claims    map[string]any
		wantAdmin bool
	}{
		{"short list", map[string]any{"groups": []any{"dev", "superadmin"}}, true},
		{"string", map[string]any{"groups": "superadmin"}, true},
		{"absent", map[string]any{}, false},
		{"long list with admin", map[string]any{"groups": append(append([]any{}, many...), "superadmin")}, true},
		{"long list without admin", map[string]any{"groups": many}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := a.adminClaimValue(tt.claims)
			if err != nil {
				t.Fatalf("adminClaimValue() error = %v", err)
			}
			if len(raw) > maxAdminClaimBytes {
				t.Errorf("adminClaimValue() is %d bytes, want at most %d", len(raw), maxAdminClaimBytes)
			}
			if got := a.isAdmin(sessionData{Claim: "groups", Value: raw}); got != tt.wantAdmin {
				t.Errorf("isAdmin(adminClaimValue(%s)) = %v, want %v", tt.name, got, tt.wantAdmin)
			}
		})
	}
	if _, err := a.adminClaimValue(map[string]any{"groups": strings.Repeat("x", 2000)}); err == nil {
		t.Errorf("adminClaimValue(2000-byte string) error = nil, want an error")
	}
}

func TestSessionKeysRoundTrip(t *testing.T) {
	k, err := GenerateSessionKeys()
	if err != nil {
		t.Fatalf("GenerateSessionKeys() error = %v", err)
	}
	if len(k.Hash) != 64 || len(k.Block) != 32 {
		t.Errorf("GenerateSessionKeys() = %d-byte hash, %d-byte block, want 64, 32", len(k.Hash), len(k.Block))
	}
	k2, err := GenerateSessionKeys()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(k.Hash, k2.Hash) {
		t.Errorf("GenerateSessionKeys() twice gave the same hash key")
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, k.Marshal(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSessionKeys(path)
	if err != nil {
		t.Fatalf("LoadSessionKeys(Marshal()) error = %v", err)
	}
	if diff := cmp.Diff(k, got); diff != "" {
		t.Errorf("LoadSessionKeys(Marshal()) mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadSessionKeys(t *testing.T) {
	h32 := bytes.Repeat([]byte{1}, 32)
	h64 := bytes.Repeat([]byte{2}, 64)
	b32 := bytes.Repeat([]byte{3}, 32)
	hx, b64, b64url := hex.EncodeToString, base64.StdEncoding.EncodeToString, base64.RawURLEncoding.EncodeToString
	tests := []struct {
		name    string
		content string
		want    SessionKeys
		wantErr string // substring; "" means success
	}{
		{"hex", hx(h64) + "\n" + hx(b32) + "\n", SessionKeys{h64, b32}, ""},
		{"hex 32-byte hash, no final newline", hx(h32) + "\n" + hx(b32), SessionKeys{h32, b32}, ""},
		{"base64", b64(h64) + "\n" + b64(b32) + "\n", SessionKeys{h64, b32}, ""},
		{"base64url raw", b64url(h32) + "\n" + b64url(b32) + "\n", SessionKeys{h32, b32}, ""},
		{"CRLF, comments, blank lines", "# keys\r\n\r\n" + hx(h64) + "\r\n  " + b64(b32) + "  \r\n", SessionKeys{h64, b32}, ""},
		{"empty file", "", SessionKeys{}, "want 2 lines (hash key, block key), got 0"},
		{"one line", hx(h64) + "\n", SessionKeys{}, "got 1"},
		{"three lines", hx(h64) + "\n" + hx(b32) + "\n" + hx(b32) + "\n", SessionKeys{}, "got 3"},
		{"hash not encoded", "not a key!\n" + hx(b32) + "\n", SessionKeys{}, "line 1 (hash key): neither hex nor base64"},
		{"block not encoded", hx(h64) + "\n" + "!!\n", SessionKeys{}, "line 2 (block key): neither hex nor base64"},
		{"short hash", hx(h32[:16]) + "\n" + hx(b32) + "\n", SessionKeys{}, "line 1 (hash key): key is 16 bytes, want 32 or 64"},
		{"48-byte hash", hx(bytes.Repeat([]byte{4}, 48)) + "\n" + hx(b32) + "\n", SessionKeys{}, "key is 48 bytes, want 32 or 64"},
		{"16-byte block", hx(h64) + "\n" + hx(b32[:16]) + "\n", SessionKeys{}, "line 2 (block key): key is 16 bytes, want 32"},
		{"64-byte block", hx(h64) + "\n" + hx(h64) + "\n", SessionKeys{}, "line 2 (block key): key is 64 bytes, want 32"},
		{"same keys", hx(b32) + "\n" + hx(b32) + "\n", SessionKeys{}, "must differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "keys")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadSessionKeys(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "auth: ") {
					t.Fatalf("LoadSessionKeys() error = %v, want an \"auth: \" error containing %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), path) {
					t.Errorf("LoadSessionKeys() error = %v, want it to name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadSessionKeys() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LoadSessionKeys() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := LoadSessionKeys(filepath.Join(t.TempDir(), "nope"))
		if err == nil || !strings.HasPrefix(err.Error(), "auth: ") || !os.IsNotExist(unwrapAll(err)) {
			t.Errorf("LoadSessionKeys(missing) error = %v, want an \"auth: \" not-exist error", err)
		}
	})
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// TestNewConfigErrors checks New refuses every bad configuration.
func TestNewConfigErrors(t *testing.T) {
	idp := newTestIdP(t)
	keys, err := GenerateSessionKeys()
	if err != nil {
		t.Fatal(err)
	}
	good := Config{
		IssuerURL:       idp.issuer(),
		ClientID:        testClientID,
		ClientSecret:    testClientSecret,
		RedirectURL:     "http://127.0.0.1:8080" + CallbackPath,
		SessionKeys:     keys,
		InsecureCookies: true,
	}
	if _, err := New(context.Background(), good, nil, nil); err != nil {
		t.Fatalf("New(good config) error = %v", err)
	}
	tests := []struct {
		name    string
		edit    func(*Config)
		wantErr string
	}{
		{"empty issuer", func(c *Config) { c.IssuerURL = "" }, "IssuerURL is empty"},
		{"relative issuer", func(c *Config) { c.IssuerURL = "/issuer" }, "IssuerURL"},
		{"issuer mismatch", func(c *Config) { c.IssuerURL = idp.issuer() + "/" }, "discovery"},
		{"issuer unreachable", func(c *Config) { c.IssuerURL = "http://127.0.0.1:1" }, "discovery"},
		{"empty client id", func(c *Config) { c.ClientID = "" }, "ClientID is empty"},
		{"empty client secret", func(c *Config) { c.ClientSecret = "" }, "ClientSecret is empty"},
		{"empty redirect", func(c *Config) { c.RedirectURL = "" }, "RedirectURL is empty"},
		{"relative redirect", func(c *Config) { c.RedirectURL = CallbackPath }, "RedirectURL"},
		{"insecure cookies off loopback", func(c *Config) { c.RedirectURL = "http://deploy.example.com" + CallbackPath }, "InsecureCookies is allowed only on loopback"},
		{"insecure cookies on lookalike host", func(c *Config) { c.RedirectURL = "http://localhost.evil.com" + CallbackPath }, "InsecureCookies"},
		{"insecure cookies on public IP", func(c *Config) { c.RedirectURL = "http://10.0.0.1" + CallbackPath }, "InsecureCookies"},
		{"insecure cookies over https off loopback", func(c *Config) { c.RedirectURL = "https://deploy.example.com" + CallbackPath }, "InsecureCookies"},
		{"http redirect with secure cookies", func(c *Config) { c.InsecureCookies = false }, "plain http"},
		{"scopes without openid", func(c *Config) { c.Scopes = []string{"profile", "email"} }, "openid"},
		{"negative TTL", func(c *Config) { c.SessionTTL = -time.Hour }, "SessionTTL"},
		{"huge TTL", func(c *Config) { c.SessionTTL = 365 * 24 * time.Hour }, "SessionTTL"},
		{"no session keys", func(c *Config) { c.SessionKeys = SessionKeys{} }, "hash key is 0 bytes"},
		{"short hash key", func(c *Config) { c.SessionKeys.Hash = keys.Hash[:16] }, "hash key is 16 bytes"},
		{"short block key", func(c *Config) { c.SessionKeys.Block = keys.Block[:16] }, "block key is 16 bytes"},
		{"bad trusted origin", func(c *Config) { c.TrustedOrigins = []string{"not an origin"} }, "TrustedOrigins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			cfg.SessionKeys = SessionKeys{Hash: bytes.Clone(keys.Hash), Block: bytes.Clone(keys.Block)}
			tt.edit(&cfg)
			a, err := New(context.Background(), cfg, nil, nil)
			if err == nil || !strings.HasPrefix(err.Error(), "auth: ") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New() = %v, %v, want an \"auth: \" error containing %q", a, err, tt.wantErr)
			}
		})
	}
}

// TestNewLoopbackHosts checks InsecureCookies is accepted on every loopback form.
func TestNewLoopbackHosts(t *testing.T) {
	idp := newTestIdP(t)
	keys, err := GenerateSessionKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"localhost:8080", "LOCALHOST", "127.0.0.1:8080", "127.0.0.2", "[::1]:8080"} {
		t.Run(host, func(t *testing.T) {
			cfg := Config{
				IssuerURL: idp.issuer(), ClientID: testClientID, ClientSecret: testClientSecret,
				RedirectURL: "http://" + host + CallbackPath, SessionKeys: keys, InsecureCookies: true,
			}
			if _, err := New(context.Background(), cfg, nil, nil); err != nil {
				t.Errorf("New(InsecureCookies, %s) error = %v, want nil", host, err)
			}
		})
	}
}

// TestDefaultDenier checks the Denier used when New is given none.
func TestDefaultDenier(t *testing.T) {
	env := newTestServer(t)
	a, err := New(context.Background(), env.cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := serveRequire(a, request(http.MethodGet, "/v1/deploy/applications", nil, nil))
	var body struct{ Error, Reason string }
	if err := json.Unmarshal(resp.body, &body); err != nil || resp.StatusCode != http.StatusUnauthorized || body.Reason != ReasonUnauthenticated {
		t.Errorf("default denier on API: status %d, body %s (%v), want 401 JSON reason %q", resp.StatusCode, resp.body, err, ReasonUnauthenticated)
	}
	resp = serveRequire(a, request(http.MethodPost, "/apps", nil, nil))
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(resp.body), ReasonUnauthenticated) {
		t.Errorf("default denier on HTML: status %d, body %s, want 401 with reason", resp.StatusCode, resp.body)
	}
}

// TestNewRefusesPlainHTTPOffLoopback: an IdP reached over plain http off
// loopback is refused, whether the issuer itself or an endpoint its
// discovery names (the client secret goes to the token endpoint, the
// signing keys come from jwks_uri). The IdP answers under any host name
// (the client dials it whatever the URL says), so only the rule refuses;
// a refused issuer gets no request at all. Loopback hosts keep working.
func TestNewRefusesPlainHTTPOffLoopback(t *testing.T) {
	idp := newTestIdP(t)
	var requests atomic.Int64
	addr := idp.srv.Listener.Addr().String()
	client := &http.Client{Timeout: 10 * time.Second, Transport: countingTransport{n: &requests, rt: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}}
	keys, err := GenerateSessionKeys()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	tests := []struct {
		name     string
		issuer   string
		endpoint string // a discovered endpoint moved off loopback, "" for none
		wantErr  string // "" for success
	}{
		{"public host", "http://idp.example.test", "", `IssuerURL "http://idp.example.test" is plain http off loopback`},
		{"public IP", "http://10.0.0.1:" + port, "", "IssuerURL"},
		{"lookalike of localhost", "http://localhost.example.test:" + port, "", "plain http off loopback"},
		{"lookalike of 127.0.0.1", "http://127.0.0.1.example.test:" + port, "", "plain http off loopback"},
		{"any address", "http://0.0.0.0:" + port, "", "plain http off loopback"},
		{"decimal loopback", "http://2130706433:" + port, "", "plain http off loopback"},
		{"token endpoint", "http://127.0.0.1:" + port, "token_endpoint", `token_endpoint "http://idp.example.test/token" is plain http off loopback`},
		{"jwks", "http://127.0.0.1:" + port, "jwks_uri", "jwks_uri"},
		{"authorization endpoint", "http://127.0.0.1:" + port, "authorization_endpoint", "authorization_endpoint"},
		{"userinfo", "http://127.0.0.1:" + port, "userinfo_endpoint", "userinfo_endpoint"},
		{"revocation", "http://127.0.0.1:" + port, "revocation_endpoint", "revocation_endpoint"},
		{"end session", "http://127.0.0.1:" + port, "end_session_endpoint", "end_session_endpoint"},
		{"127.0.0.1", "http://127.0.0.1:" + port, "", ""},
		{"127.0.0.0/8", "http://127.9.8.7:" + port, "", ""},
		{"localhost", "http://localhost:" + port, "", ""},
		{"LOCALHOST", "http://LOCALHOST:" + port, "", ""},
		{"::1", "http://[::1]:" + port, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp.set(func(p *testIdP) {
				p.editDiscovery = func(doc map[string]any) {
					doc["issuer"] = tt.issuer
					if tt.endpoint != "" {
						doc[tt.endpoint] = "http://idp.example.test/" + strings.TrimSuffix(tt.endpoint, "_endpoint")
					}
				}
			})
			requests.Store(0)
			cfg := Config{
				IssuerURL: tt.issuer, ClientID: testClientID, ClientSecret: testClientSecret,
				RedirectURL: "http://127.0.0.1:8080" + CallbackPath, SessionKeys: keys, InsecureCookies: true, HTTPClient: client,
			}
			_, err := New(context.Background(), cfg, nil, nil)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("New(issuer %s) error = %v, want nil", tt.issuer, err)
			case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), "auth: ") || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("New(issuer %s, %s off loopback) error = %v, want an \"auth: \" error containing %q", tt.issuer, tt.endpoint, err, tt.wantErr)
			case tt.wantErr != "" && tt.endpoint == "" && requests.Load() != 0:
				t.Errorf("New(issuer %s) sent %d requests to the IdP, want none", tt.issuer, requests.Load())
			}
		})
	}
}

// countingTransport counts the requests it sends.
type countingTransport struct {
	n  *atomic.Int64
	rt http.RoundTripper
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}
