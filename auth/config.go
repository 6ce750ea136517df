package auth

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/roles"
)

// Defaults applied by New to zero-valued Config fields.
const (
	DefaultAdminClaim = "groups"
	DefaultAdminValue = "superadmin"
	// DefaultGroupsClaim is the claim read for the person's groups.
	DefaultGroupsClaim = "groups"
	DefaultSessionTTL  = 8 * time.Hour
	// DefaultSessionRecheck is how often a session re-checks its user with
	// the IdP (through the refresh token).
	DefaultSessionRecheck = 10 * time.Minute
)

// defaultScopes are the OAuth 2.0 scopes requested when Config.Scopes is empty.
// offline_access asks for the refresh token the session re-checks with.
func defaultScopes() []string {
	return []string{"openid", "profile", "email", "groups", "offline_access"}
}

// maxSessionTTL bounds Config.SessionTTL: a session cookie is a bearer
// credential and must not live for months.
const maxSessionTTL = 7 * 24 * time.Hour

// Config configures an Auth. The zero value is not usable: IssuerURL,
// ClientID, ClientSecret, RedirectURL and SessionKeys are required.
type Config struct {
	// IssuerURL is the OIDC issuer. Discovery runs once, in New, and the
	// discovered issuer must match exactly. It must be https, or plain
	// http on a loopback host (requireSecureURL), as must the endpoints
	// discovery names.
	IssuerURL string
	// ClientID is the OAuth 2.0 client id; ID tokens must name it in "aud".
	ClientID string
	// ClientSecret is the OAuth 2.0 client secret.
	ClientSecret string
	// RedirectURL is the absolute callback URL registered with the IdP,
	// for example http://127.0.0.1:8080/auth/callback.
	RedirectURL string
	// Scopes requested at login; "openid profile email groups" when empty.
	// Must include "openid".
	Scopes []string
	// TokenAuthMethod is how the client authenticates at the token
	// endpoint: TokenAuthBasic or TokenAuthPost; "" takes it from
	// discovery (tokenAuthStyle).
	TokenAuthMethod string
	// AdminClaim is the ID-token claim IsAdmin reads; DefaultAdminClaim when empty.
	AdminClaim string
	// AdminValue is the value of AdminClaim that makes a superadmin;
	// DefaultAdminValue when empty. See IsAdmin.
	AdminValue string
	// GroupsClaim is the ID-token claim holding the person's groups, which
	// Roles matches against; DefaultGroupsClaim when empty. Only strings
	// of a list (or a single string) count, at most roles.MaxGroups of
	// them, and a session keeps only the groups Roles names
	// (roles.Policy.RelevantGroups), at most maxSessionGroupsBytes.
	GroupsClaim string
	// Roles, when it came from a roles file (roles.Policy.HasFile), moves
	// authorization from Require to the routes: Require then admits anyone
	// with a role (the admin claim or a binding) and each route decides its
	// action. Nil, or a policy without a file, is the default: Require
	// admits superadmins only (IsAdmin), as without roles.
	Roles *roles.Policy
	// SessionKeys authenticate and encrypt the session and login cookies.
	SessionKeys SessionKeys
	// SessionTTL bounds a session's lifetime, enforced server-side from the
	// timestamp in the session and by the cookie's Max-Age;
	// DefaultSessionTTL when zero.
	SessionTTL time.Duration
	// SessionRecheck is how often a session re-checks its user with the IdP:
	// once it is this old since login or the last re-check, the next request
	// refreshes the tokens with the refresh token, verifies the new ID token
	// and re-runs IsAdmin; a refused refresh, another subject or a lost
	// admin claim signs the user out. DefaultSessionRecheck when zero; at
	// least a second and at most SessionTTL.
	SessionRecheck time.Duration
	// InsecureCookies drops the Secure attribute from cookies. It is allowed
	// only when RedirectURL's host is a loopback IP or "localhost"; New fails
	// otherwise.
	InsecureCookies bool
	// TrustedOrigins are extra origins ("https://console.example.com") whose
	// cross-origin unsafe requests are allowed; normally empty.
	TrustedOrigins []string
	// LocalLogout keeps logout local: it lands on "/" instead of sending
	// the browser to the IdP's end_session_endpoint (RP-initiated logout,
	// which ends the IdP's own session too), which happens by default
	// whenever discovery advertises one.
	LocalLogout bool
	// HTTPClient, if set, is used for discovery, the JWKS and token exchange.
	HTTPClient *http.Client
}

// withDefaults returns a copy of c with defaults applied.
func (c Config) withDefaults() Config {
	if len(c.Scopes) == 0 {
		c.Scopes = defaultScopes()
	} else {
		c.Scopes = slices.Clone(c.Scopes)
	}
	if c.AdminClaim == "" {
		c.AdminClaim = DefaultAdminClaim
	}
	if c.AdminValue == "" {
		c.AdminValue = DefaultAdminValue
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = DefaultGroupsClaim
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.SessionRecheck == 0 {
		c.SessionRecheck = min(DefaultSessionRecheck, c.SessionTTL)
	}
	c.TrustedOrigins = slices.Clone(c.TrustedOrigins)
	return c
}

// validate reports the first problem with a defaulted Config.
func (c Config) validate() error {
	if err := requireSecureURL("IssuerURL", c.IssuerURL); err != nil {
		return fmt.Errorf("auth: config: %w", err)
	}
	if c.ClientID == "" {
		return errors.New("auth: config: ClientID is empty")
	}
	if c.ClientSecret == "" {
		return errors.New("auth: config: ClientSecret is empty")
	}
	if err := requireAbsoluteURL("RedirectURL", c.RedirectURL); err != nil {
		return fmt.Errorf("auth: config: %w", err)
	}
	redirect, _ := url.Parse(c.RedirectURL) // parsed above
	if c.InsecureCookies && !isLoopbackHost(redirect.Hostname()) {
		return fmt.Errorf("auth: config: InsecureCookies is allowed only on loopback, but RedirectURL host is %q", redirect.Hostname())
	}
	if redirect.Scheme == "http" && !c.InsecureCookies {
		return errors.New("auth: config: RedirectURL is plain http but cookies are Secure (the browser would never send them back); use https, or InsecureCookies on loopback")
	}
	if !slices.Contains(c.Scopes, "openid") {
		return fmt.Errorf("auth: config: Scopes %q lack \"openid\"", c.Scopes)
	}
	if c.SessionTTL < time.Minute || c.SessionTTL > maxSessionTTL {
		return fmt.Errorf("auth: config: SessionTTL %v out of range [1m, %v]", c.SessionTTL, maxSessionTTL)
	}
	if c.SessionRecheck < time.Second || c.SessionRecheck > c.SessionTTL {
		return fmt.Errorf("auth: config: SessionRecheck %v out of range [1s, SessionTTL %v]", c.SessionRecheck, c.SessionTTL)
	}
	if err := c.SessionKeys.validate(); err != nil {
		return err
	}
	return nil
}

// requireAbsoluteURL checks that raw is an absolute http(s) URL. Its error
// starts with the field, for the caller to prefix.
func requireAbsoluteURL(field, raw string) error {
	if raw == "" {
		return fmt.Errorf("%s is empty", field)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute http(s) URL", field, raw)
	}
	return nil
}

// requireSecureURL checks that raw, a URL of the IdP, is an absolute https
// URL, or plain http on a loopback host (127.0.0.0/8, ::1, localhost: a
// local IdP such as the demo's). Over plain http off loopback the signing
// keys, the ID tokens and the client secret cross the network in the
// clear, and anyone on the path can sign in as anyone. Its error starts
// with the field, for the caller to prefix.
func requireSecureURL(field, raw string) error {
	if err := requireAbsoluteURL(field, raw); err != nil {
		return err
	}
	if u, _ := url.Parse(raw); u.Scheme == "http" && !isLoopbackHost(u.Hostname()) { // parsed above
		return fmt.Errorf("%s %q is plain http off loopback (tokens, keys and the client secret would cross the network in the clear): use https; plain http is allowed only on 127.0.0.0/8, ::1 and localhost", field, raw)
	}
	return nil
}

// isLoopbackHost reports whether host (no port) is "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SessionKeys are the keys of the session and login cookies: Hash
// authenticates (HMAC-SHA256, 32 or 64 bytes) and Block encrypts (AES-256,
// 32 bytes).
type SessionKeys struct {
	Hash, Block []byte
}

func (k SessionKeys) validate() error {
	if n := len(k.Hash); n != 32 && n != 64 {
		return fmt.Errorf("auth: session keys: hash key is %d bytes, want 32 or 64", n)
	}
	if n := len(k.Block); n != 32 {
		return fmt.Errorf("auth: session keys: block key is %d bytes, want 32", n)
	}
	if bytes.Equal(k.Hash, k.Block) {
		return errors.New("auth: session keys: hash key and block key must differ")
	}
	return nil
}

// GenerateSessionKeys returns fresh random keys: a 64-byte hash key and a
// 32-byte block key.
func GenerateSessionKeys() (SessionKeys, error) {
	k := SessionKeys{Hash: make([]byte, 64), Block: make([]byte, 32)}
	if _, err := rand.Read(k.Hash); err != nil {
		return SessionKeys{}, fmt.Errorf("auth: generate session keys: %w", err)
	}
	if _, err := rand.Read(k.Block); err != nil {
		return SessionKeys{}, fmt.Errorf("auth: generate session keys: %w", err)
	}
	return k, nil
}

// Marshal returns k in the file format LoadSessionKeys reads: two lines,
// the hex-encoded hash key then the hex-encoded block key.
func (k SessionKeys) Marshal() []byte {
	return []byte(hex.EncodeToString(k.Hash) + "\n" + hex.EncodeToString(k.Block) + "\n")
}

// LoadSessionKeys reads session keys from the file at path: two lines, the
// hash key then the block key, each hex or base64 (standard or URL
// alphabet, padded or not). Blank lines and lines starting with "#" are
// ignored. The keys must have valid lengths (see SessionKeys).
func LoadSessionKeys(path string) (SessionKeys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return SessionKeys{}, fmt.Errorf("auth: session keys: %w", err)
	}
	k, err := parseSessionKeys(data)
	if err != nil {
		return SessionKeys{}, fmt.Errorf("auth: session keys %s: %w", path, err)
	}
	return k, nil
}

func parseSessionKeys(data []byte) (SessionKeys, error) {
	var lines []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lines = append(lines, line)
	}
	if len(lines) != 2 {
		return SessionKeys{}, fmt.Errorf("want 2 lines (hash key, block key), got %d", len(lines))
	}
	hash, err := decodeKey(lines[0], 32, 64)
	if err != nil {
		return SessionKeys{}, fmt.Errorf("line 1 (hash key): %w", err)
	}
	block, err := decodeKey(lines[1], 32)
	if err != nil {
		return SessionKeys{}, fmt.Errorf("line 2 (block key): %w", err)
	}
	k := SessionKeys{Hash: hash, Block: block}
	if bytes.Equal(k.Hash, k.Block) {
		return SessionKeys{}, errors.New("hash key and block key must differ")
	}
	return k, nil
}

// decodeKey decodes s as hex or base64 and checks its length is one of sizes.
// An encoding that decodes to a valid length wins, so the rare string that is
// both valid hex and valid base64 is read the way that makes sense.
func decodeKey(s string, sizes ...int) ([]byte, error) {
	decoders := []func(string) ([]byte, error){
		hex.DecodeString,
		base64.StdEncoding.DecodeString,
		base64.RawStdEncoding.DecodeString,
		base64.URLEncoding.DecodeString,
		base64.RawURLEncoding.DecodeString,
	}
	gotLen := -1
	for _, dec := range decoders {
		b, err := dec(s)
		if err != nil {
			continue
		}
		if slices.Contains(sizes, len(b)) {
			return b, nil
		}
		if gotLen < 0 {
			gotLen = len(b) // report the first reading (hex before base64)
		}
	}
	if gotLen < 0 {
		return nil, errors.New("neither hex nor base64")
	}
	return nil, fmt.Errorf("key is %d bytes, want %s", gotLen, joinSizes(sizes))
}

func joinSizes(sizes []int) string {
	parts := make([]string, len(sizes))
	for i, n := range sizes {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, " or ")
}
