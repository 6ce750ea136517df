package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// HandleLogin starts a login: GET /auth/login?next=/path. It stores a fresh
// state, nonce and PKCE verifier, with next, in the short-lived encrypted
// login cookie and redirects (302) to the IdP's authorization endpoint with
// the S256 code challenge. next must be a local path (see safeNext),
// otherwise the user lands on "/".
func (a *Auth) HandleLogin(w http.ResponseWriter, r *http.Request) {
	ls := loginState{
		State:    randomToken(),
		Nonce:    randomToken(),
		Verifier: oauth2.GenerateVerifier(),
		Next:     safeNext(r.URL.Query().Get("next")),
		Created:  a.now().Unix(),
	}
	if err := writeCookie(a.logins, w, r, a.cookieName(LoginCookie), ls); err != nil {
		a.deny(w, r, http.StatusInternalServerError, "login failed: could not start", "error", err.Error())
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, a.oauth.AuthCodeURL(ls.State,
		oidc.Nonce(ls.Nonce),
		oauth2.S256ChallengeOption(ls.Verifier),
	), http.StatusFound)
}

// HandleCallback finishes a login: GET /auth/callback?code=...&state=....
// It checks the state against the login cookie (constant time), reports an
// IdP error, exchanges the code with the PKCE verifier, verifies the ID
// token (signature, issuer, audience, expiry) and its nonce, then stores a
// new session and redirects (302) to the next path saved at login. The login
// cookie is cleared whatever the outcome. Every failure is a 401 through the
// Denier with a "login failed: ..." reason (500 if the session cannot be
// encoded). A user who is not a superadmin still gets a session, so the 403
// page can name them and offer logout; Require denies them every protected
// route.
func (a *Auth) HandleCallback(w http.ResponseWriter, r *http.Request) {
	a.clearCookie(w, a.cookieName(LoginCookie)) // one use only, whatever happens next
	fail := func(reason string, err error) {
		var attrs []any
		if err != nil {
			attrs = append(attrs, "error", loginErrorText(err))
		}
		a.deny(w, r, http.StatusUnauthorized, "login failed: "+reason, attrs...)
	}

	var ls loginState
	if err := readCookie(a.logins, r, a.cookieName(LoginCookie), &ls); err != nil {
		fail("missing or expired login state", err)
		return
	}
	if age := a.now().Sub(time.Unix(ls.Created, 0)); age < -clockSkew || age > loginTTL {
		fail("missing or expired login state", errors.New("auth: login state expired"))
		return
	}
	q := r.URL.Query()
	if !equalSecret(q.Get("state"), ls.State) {
		fail("state mismatch", nil)
		return
	}
	if code := q.Get("error"); code != "" {
		fail("identity provider returned "+sanitizeErrorCode(code), nil)
		return
	}
	code := q.Get("code")
	if code == "" {
		fail("no authorization code", nil)
		return
	}

	ctx, cancel := context.WithTimeout(a.clientContext(r.Context()), exchangeTimeout)
	defer cancel()
	tok, err := a.oauth.Exchange(ctx, code, oauth2.VerifierOption(ls.Verifier))
	if err != nil {
		fail("code exchange", err)
		return
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		fail("no id token", nil)
		return
	}
	idt, err := a.verifier.Verify(ctx, raw)
	if err != nil {
		fail("invalid id token", err)
		return
	}
	if !equalSecret(idt.Nonce, ls.Nonce) {
		fail("nonce mismatch", nil)
		return
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			fail("invalid id token", err)
			return
		}
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		fail("invalid id token", err)
		return
	}
	value, err := a.adminClaimValue(claims)
	if err != nil {
		fail("invalid id token", err)
		return
	}

	if len(tok.RefreshToken) > maxRefreshTokenBytes {
		fail("refresh token too long for a session", fmt.Errorf("auth: refresh token of %d bytes, more than %d", len(tok.RefreshToken), maxRefreshTokenBytes))
		return
	}
	verified, _ := claims["email_verified"].(bool)
	now := a.now()
	s := sessionData{
		Version:  sessionVersion,
		Subject:  idt.Subject,
		Email:    stringClaim(claims, "email"),
		Name:     displayName(claims),
		Claim:    a.cfg.AdminClaim,
		Value:    value,
		IssuedAt: now.Unix(),
		Expires:  now.Add(a.cfg.SessionTTL).Unix(),
		CSRF:     randomToken(),
		Verified: verified,
		Refresh:  tok.RefreshToken,
		Checked:  now.Unix(),
		Groups:   a.sessionGroups(claims),
		Issuer:   idt.Issuer,
	}
	if s.Subject == "" {
		fail("invalid id token", errors.New("auth: id token without subject"))
		return
	}
	if err := writeCookie(a.sessions, w, r, a.cookieName(SessionCookie), s); err != nil {
		a.deny(w, r, http.StatusInternalServerError, "login failed: could not store session", "error", err.Error())
		return
	}
	a.log.InfoContext(r.Context(), "auth: login",
		"subject", s.Subject, "email", s.Email, "admin", a.isAdmin(s), "groups", s.Groups)
	if s.Refresh == "" {
		a.log.WarnContext(r.Context(), "auth: the identity provider issued no refresh token: the session ends at its first re-check (request the offline_access scope)",
			"subject", s.Subject, "email", s.Email, "recheck", a.cfg.SessionRecheck.String())
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, ls.Next, http.StatusFound)
}

// HandleLogout ends the session: POST /auth/logout. It sits outside Require
// (a signed-in non-admin must be able to log out), so it checks the request
// itself: a cross-origin request is denied (403), and a request with a
// valid session must carry its CSRF token (403). It revokes the session's
// refresh token at the IdP's revocation_endpoint (when advertised; best
// effort, logged), clears the session cookie and redirects (303) to the
// IdP's end_session_endpoint when discovery advertised one (ending the IdP
// session too), else to "/" (also with Config.LocalLogout).
func (a *Auth) HandleLogout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	if err := a.crossOrigin.Check(r); err != nil {
		a.deny(w, r, http.StatusForbidden, ReasonCrossOrigin)
		return
	}
	if s, err := a.readSession(r); err == nil {
		if !validCSRF(r, s.CSRF) {
			a.deny(w, r, http.StatusForbidden, ReasonCSRF, "subject", s.Subject, "email", s.Email)
			return
		}
		revoked := "no"
		if err := a.revoke(r.Context(), s.Refresh); err != nil {
			revoked = "failed: " + err.Error()
		} else if a.revocation != "" && s.Refresh != "" {
			revoked = "yes"
		}
		a.log.InfoContext(r.Context(), "auth: logout", "subject", s.Subject, "email", s.Email,
			"refresh_token_revoked", revoked, "idp_logout", a.endSession != "")
	}
	a.clearCookie(w, a.cookieName(SessionCookie))
	w.Header().Set("Cache-Control", "no-store")
	target := "/"
	if a.endSession != "" {
		u, _ := url.Parse(a.endSession) // validated in New
		q := u.Query()
		q.Set("client_id", a.cfg.ClientID)
		u.RawQuery = q.Encode()
		target = u.String()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// safeNext returns next if it is a local path, else "/". A local path starts
// with "/", not "//" or "/\" (both read as another host by browsers), has no
// control characters (browsers drop tabs and newlines, turning "/\t/x" into
// "//x") and no scheme or host.
func safeNext(next string) string {
	if len(next) == 0 || next[0] != '/' {
		return "/"
	}
	if len(next) > 1 && (next[1] == '/' || next[1] == '\\') {
		return "/"
	}
	for _, c := range []byte(next) {
		if c < 0x20 || c == 0x7f {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	return next
}

// equalSecret compares two secrets in constant time; empty never matches.
func equalSecret(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// sanitizeErrorCode keeps an IdP error code (attacker-controllable: anyone
// can craft a callback URL) to a short run of [a-z0-9_].
func sanitizeErrorCode(code string) string {
	var b strings.Builder
	for _, c := range code {
		if b.Len() >= 64 {
			break
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' {
			b.WriteRune(c)
		}
	}
	if b.Len() == 0 {
		return "an error"
	}
	return b.String()
}

// loginErrorText is the loggable text of a login error: for a token-endpoint
// error only its OAuth error code, never the response body.
func loginErrorText(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" && re.Response != nil {
			code = re.Response.Status
		}
		return "token endpoint: " + code
	}
	return err.Error()
}

func stringClaim(claims map[string]any, name string) string {
	s, _ := claims[name].(string)
	return s
}

// displayName is the user's name: "name", else "preferred_username".
func displayName(claims map[string]any) string {
	if n := stringClaim(claims, "name"); n != "" {
		return n
	}
	return stringClaim(claims, "preferred_username")
}
