package auth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/sessions"
)

// valueKey is the one key of a cookie session's Values; its value is a JSON
// string, so gob never sees a custom type.
const valueKey = "v"

// sessionVersion is bumped when sessionData changes incompatibly; a session
// of another version is no session. Version 2 added the refresh token and
// the time of the last re-check.
const sessionVersion = 2

// clockSkew is how far in the future a session's issued-at may be.
const clockSkew = time.Minute

// maxAdminClaimBytes bounds the admin-claim value stored in the session, so
// a user with hundreds of groups still fits in a cookie (see adminClaimValue).
const maxAdminClaimBytes = 1024

// sessionData is the content of the session cookie.
type sessionData struct {
	Version int             `json:"ver"`
	Subject string          `json:"sub"`
	Email   string          `json:"email,omitempty"`
	Name    string          `json:"name,omitempty"`
	Claim   string          `json:"claim"`           // name of the admin claim at login
	Value   json.RawMessage `json:"value,omitempty"` // its value at login (or the last re-check), re-checked by IsAdmin per request
	// Verified is the email_verified claim at login (or the last re-check).
	Verified bool   `json:"ev,omitempty"`
	IssuedAt int64  `json:"iat"`
	Expires  int64  `json:"exp"`
	CSRF     string `json:"csrf"`
	// Refresh is the IdP's refresh token, with which the session re-checks
	// the user every Config.SessionRecheck; "" when the IdP issued none
	// (the session then ends at its first re-check).
	Refresh string `json:"rt,omitempty"`
	// Checked is when the IdP last vouched for the user (login or re-check).
	Checked int64 `json:"chk"`
	// Groups are the groups of the groups claim that the roles file names
	// (Auth.sessionGroups), at login or the last re-check.
	Groups []string `json:"grp,omitempty"`
	// Issuer is the ID token's "iss" at login.
	Issuer string `json:"iss,omitempty"`
}

// loginState is the content of the login cookie.
type loginState struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Next     string `json:"next"`
	Created  int64  `json:"created"`
}

// newCookieStore returns an encrypted, authenticated cookie store whose
// cookies and timestamps expire after ttl.
func newCookieStore(cfg Config, ttl time.Duration) *sessions.CookieStore {
	s := sessions.NewCookieStore(cfg.SessionKeys.Hash, cfg.SessionKeys.Block)
	s.Options = &sessions.Options{
		Path:     "/",
		HttpOnly: true,
		Secure:   !cfg.InsecureCookies,
		SameSite: http.SameSiteLaxMode,
	}
	s.MaxAge(int(ttl / time.Second))
	return s
}

// errNoCookie reports that the request carries no such cookie at all.
var errNoCookie = errors.New("auth: no cookie")

// readCookie decodes the JSON value of the named cookie from store into v.
func readCookie(store *sessions.CookieStore, r *http.Request, name string, v any) error {
	if _, err := r.Cookie(name); err != nil {
		return errNoCookie
	}
	s, err := store.New(r, name)
	if err != nil {
		return fmt.Errorf("auth: decode %s: %w", name, err)
	}
	raw, ok := s.Values[valueKey].(string)
	if !ok {
		return fmt.Errorf("auth: decode %s: no value", name)
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		return fmt.Errorf("auth: decode %s: %w", name, err)
	}
	return nil
}

// writeCookie stores v, as JSON, in the named cookie.
func writeCookie(store *sessions.CookieStore, w http.ResponseWriter, r *http.Request, name string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("auth: encode %s: %w", name, err)
	}
	s := sessions.NewSession(store, name)
	opts := *store.Options
	s.Options = &opts
	s.Values[valueKey] = string(raw)
	if err := store.Save(r, w, s); err != nil {
		return fmt.Errorf("auth: encode %s: %w", name, err)
	}
	return nil
}

// clearCookie tells the browser to drop the named cookie.
func (a *Auth) clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{
		Name:     name,
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   !a.cfg.InsecureCookies,
		SameSite: http.SameSiteLaxMode,
	})
}

// readSession returns the request's valid session. Any problem (no cookie,
// tampering, another key, bad JSON, expiry, a changed admin claim name) is
// an error: the caller treats it as no session.
func (a *Auth) readSession(r *http.Request) (sessionData, error) {
	var s sessionData
	if err := readCookie(a.sessions, r, a.cookieName(SessionCookie), &s); err != nil {
		return sessionData{}, err
	}
	now := a.now()
	switch {
	case s.Version != sessionVersion:
		return sessionData{}, fmt.Errorf("auth: session version %d", s.Version)
	case s.Subject == "":
		return sessionData{}, errors.New("auth: session without subject")
	case len(s.CSRF) < 32:
		return sessionData{}, errors.New("auth: session without csrf token")
	case s.Claim != a.cfg.AdminClaim:
		return sessionData{}, fmt.Errorf("auth: session admin claim %q, configured %q", s.Claim, a.cfg.AdminClaim)
	case time.Unix(s.IssuedAt, 0).After(now.Add(clockSkew)), time.Unix(s.Checked, 0).After(now.Add(clockSkew)):
		return sessionData{}, errors.New("auth: session issued in the future")
	case !now.Before(time.Unix(s.Expires, 0)):
		return sessionData{}, errors.New("auth: session expired")
	case !now.Before(time.Unix(s.IssuedAt, 0).Add(a.cfg.SessionTTL)):
		return sessionData{}, errors.New("auth: session older than SessionTTL")
	}
	return s, nil
}

// isAdmin re-evaluates IsAdmin on the admin-claim value stored at login.
func (a *Auth) isAdmin(s sessionData) bool {
	if len(s.Value) == 0 {
		return false
	}
	var v any
	if err := json.Unmarshal(s.Value, &v); err != nil {
		return false
	}
	return IsAdmin(map[string]any{s.Claim: v, "email_verified": s.Verified}, a.cfg.AdminClaim, a.cfg.AdminValue)
}

// identity returns the Identity of a valid session.
func (a *Auth) identity(s sessionData) Identity {
	return a.withRoleClaims(Identity{
		Subject: s.Subject,
		Email:   s.Email,
		Name:    s.Name,
		Admin:   a.isAdmin(s),
		Expires: time.Unix(s.Expires, 0),
		Recheck: time.Unix(s.Checked, 0).Add(a.cfg.SessionRecheck),
	}, s.Verified, s.Groups, s.Issuer)
}

// cookieName is the name of a cookie with the given base name: with the
// "__Host-" prefix whenever cookies are Secure, so browsers accept it only
// from this host over HTTPS, with Path=/ and no Domain (no subdomain or
// plain-HTTP page can set or shadow it).
func (a *Auth) cookieName(base string) string {
	if a.cfg.InsecureCookies {
		return base
	}
	return HostPrefix + base
}

// adminClaimValue returns the JSON of claims[a.cfg.AdminClaim] to keep in the
// session. A list too long for a cookie is cut down to the entries equal to
// AdminValue: IsAdmin gives the same answer on it, and a later change of
// AdminValue fails closed (not admin) until the user logs in again.
func (a *Auth) adminClaimValue(claims map[string]any) (json.RawMessage, error) {
	v, ok := claims[a.cfg.AdminClaim]
	if !ok {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("auth: encode admin claim: %w", err)
	}
	if len(raw) <= maxAdminClaimBytes {
		return raw, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("auth: admin claim %q is %d bytes, too long for a session", a.cfg.AdminClaim, len(raw))
	}
	kept := []string{}
	for _, e := range list {
		if s, ok := e.(string); ok && s == a.cfg.AdminValue {
			kept = append(kept, s)
			break
		}
	}
	return json.Marshal(kept)
}

// randomToken returns 32 random bytes, base64url without padding.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b)
}
