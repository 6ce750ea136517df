package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// refreshReuse is how long the outcome of one refresh answers the requests
// that still carry the refresh token it used (requests in flight, other
// tabs), so the IdP sees each refresh token once: an IdP that rotates
// refresh tokens revokes the whole grant when a used one comes back.
const refreshReuse = 2 * time.Minute

// A re-check that found the IdP unavailable is answered from memory (503,
// the session kept) until the IdP's Retry-After has passed, within
// [refreshRetryMin, refreshRetryMax]; refreshRetryMin when it gives none.
// So a rate-limited or failing IdP is asked again at most once per
// refreshRetryMin per session, however many requests the session makes.
const (
	refreshRetryMin = 5 * time.Second
	refreshRetryMax = time.Minute
)

// maxRefreshCalls bounds the remembered refresh outcomes.
const maxRefreshCalls = 10000

// maxRefreshTokenBytes bounds a refresh token kept in the session cookie
// (a cookie holds 4 KiB in all).
const maxRefreshTokenBytes = 2048

// Errors of a refresh.
var (
	// errNoRefreshToken: the session holds no refresh token, so the IdP
	// cannot be asked; the session ends at its first re-check.
	errNoRefreshToken = errors.New("auth: no refresh token to re-check the session with")
	// errRefreshRefused: the IdP's token endpoint answered the refresh
	// with an error of its own (invalid_grant, access_denied,
	// invalid_client, any 4xx but 408 and 429): access has ended.
	errRefreshRefused = errors.New("auth: the identity provider refused the refresh")
	// errRefreshInvalid: the IdP answered something unusable (an invalid
	// ID token, no claims to re-check): fail closed, the session ends.
	errRefreshInvalid = errors.New("auth: invalid refresh answer")
	// errRefreshUnavailable: the IdP could not answer: a network error, a
	// timeout (of ours, or its 408), its 5xx or 429: deny for now, keep
	// the session and try again later (unavailableError says when).
	errRefreshUnavailable = errors.New("auth: identity provider unavailable")
)

// reasonNoLongerAdmin is the re-check's sign-out reason for a superadmin who
// is one no longer (without a roles file; see reasonNoRoleLeft).
const reasonNoLongerAdmin = "no longer a superadmin"

// recheckOutcome is what a session's re-check leads to.
type recheckOutcome int

const (
	recheckKeep        recheckOutcome = iota // the IdP vouched again: keep the updated session
	recheckSignOut                           // access ended: clear the session
	recheckUnavailable                       // the IdP could not be asked: deny this request, keep the session
)

func (o recheckOutcome) String() string {
	switch o {
	case recheckKeep:
		return "keep"
	case recheckSignOut:
		return "sign out"
	case recheckUnavailable:
		return "unavailable"
	}
	return "unknown"
}

// refreshed is what a refresh learned about the user.
type refreshed struct {
	Subject string
	Claims  map[string]any
	Refresh string // the refresh token to keep (rotated or the same)
}

// decideRecheck decides a re-check from the session's subject and admin
// state before it and what the refresh returned (err, the subject and the
// admin state the new claims give). Only an IdP that could not be asked
// keeps the session, unused, for another try; a superadmin who is one no
// longer is signed out rather than shown a 403.
func decideRecheck(subject string, err error, gotSubject string, wasAdmin, nowAdmin bool) (recheckOutcome, string) {
	switch {
	case errors.Is(err, errRefreshUnavailable):
		return recheckUnavailable, err.Error()
	case err != nil:
		return recheckSignOut, err.Error()
	case gotSubject != subject:
		return recheckSignOut, "the identity provider answered for another subject"
	case wasAdmin && !nowAdmin:
		return recheckSignOut, reasonNoLongerAdmin
	}
	return recheckKeep, ""
}

// recheck asks the IdP about the session's user again and returns the
// updated session and what to do with it.
func (a *Auth) recheck(ctx context.Context, s sessionData) (sessionData, recheckOutcome, string) {
	var (
		res refreshed
		err error
	)
	if s.Refresh == "" {
		err = errNoRefreshToken
	} else {
		res, err = a.refreshes.do(s.Refresh, a.now, func() (refreshed, error) { return a.refresh(ctx, s.Refresh) })
	}
	ns := s
	if err == nil {
		var value []byte
		if value, err = a.adminClaimValue(res.Claims); err != nil {
			err = fmt.Errorf("%w: %v", errRefreshInvalid, err)
		}
		ns.Value = value
		ns.Verified, _ = res.Claims["email_verified"].(bool)
		if e := stringClaim(res.Claims, "email"); e != "" || ns.Email != "" {
			ns.Email = e
		}
		if n := displayName(res.Claims); n != "" {
			ns.Name = n
		}
		ns.Groups = a.sessionGroups(res.Claims)
		ns.Refresh = res.Refresh
		ns.Checked = a.now().Unix()
	}
	outcome, why := decideRecheck(s.Subject, err, res.Subject, a.mayEnter(a.identity(s)), err == nil && a.mayEnter(a.identity(ns)))
	if outcome == recheckSignOut && why == reasonNoLongerAdmin && a.cfg.Roles.HasFile() {
		why = reasonNoRoleLeft
	}
	return ns, outcome, why
}

// refresh redeems the refresh token at the IdP and verifies the answer: the
// new ID token like a login's (signature, issuer, audience, expiry), else
// the userinfo of the new access token. It runs on its own deadline, not the
// request's: a client that goes away mid-refresh must not lose the rotated
// token.
func (a *Auth) refresh(ctx context.Context, rt string) (refreshed, error) {
	ctx, cancel := context.WithTimeout(a.clientContext(context.WithoutCancel(ctx)), exchangeTimeout)
	defer cancel()
	tok, err := a.oauth.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && refreshRefused(re) {
			return refreshed{}, fmt.Errorf("%w: %s", errRefreshRefused, loginErrorText(err))
		}
		retry := refreshRetryMin
		if re != nil && re.Response != nil {
			retry = retryAfter(re.Response.Header.Get("Retry-After"), a.now())
		}
		return refreshed{}, &unavailableError{text: loginErrorText(err), retry: retry}
	}
	out := refreshed{Refresh: tok.RefreshToken}
	if len(out.Refresh) > maxRefreshTokenBytes {
		return refreshed{}, fmt.Errorf("%w: refresh token of %d bytes, more than %d", errRefreshInvalid, len(out.Refresh), maxRefreshTokenBytes)
	}
	if raw, ok := tok.Extra("id_token").(string); ok && raw != "" {
		idt, err := a.verifier.Verify(ctx, raw)
		if err != nil {
			return refreshed{}, fmt.Errorf("%w: id token: %v", errRefreshInvalid, err)
		}
		if err := idt.Claims(&out.Claims); err != nil {
			return refreshed{}, fmt.Errorf("%w: id token: %v", errRefreshInvalid, err)
		}
		out.Subject = idt.Subject
		return out, nil
	}
	if a.userInfo == nil {
		return refreshed{}, fmt.Errorf("%w: no id token and no userinfo endpoint", errRefreshInvalid)
	}
	ui, err := a.userInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		return refreshed{}, fmt.Errorf("%w: userinfo: %v", errRefreshUnavailable, err)
	}
	out.Subject, out.Claims = ui.subject, ui.claims
	return out, nil
}

// refreshRefused reports whether the token endpoint's answer to a
// refresh ends the session: every answer but an outage's (idpOutage),
// whatever its error code (invalid_grant, access_denied: Hydra's answer
// for a disabled user, invalid_client, invalid_request, a proxy's or
// firewall's 4xx). Only an IdP that could not answer keeps the session:
// a refusal read as an outage would keep a revoked session alive on 503s
// forever. The token endpoint's client authentication is fixed
// (tokenAuthStyle), so the answer read here is the IdP's to this refresh.
func refreshRefused(re *oauth2.RetrieveError) bool {
	if re.Response == nil {
		return re.ErrorCode != ""
	}
	return !idpOutage(re.Response.StatusCode)
}

// idpOutage reports whether a token endpoint's HTTP status says the IdP
// could not answer now: a 5xx, 408 (it timed out) or 429 (it sheds load;
// signing everyone out then would send them all to its login at once).
func idpOutage(status int) bool {
	return status >= 500 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests
}

// unavailableError is errRefreshUnavailable with how long to wait before
// asking the IdP again.
type unavailableError struct {
	text  string
	retry time.Duration
}

func (e *unavailableError) Error() string { return errRefreshUnavailable.Error() + ": " + e.text }
func (e *unavailableError) Unwrap() error { return errRefreshUnavailable }

// retryAfter reads a Retry-After header (seconds or an HTTP date) as a
// wait within [refreshRetryMin, refreshRetryMax]; refreshRetryMin when it
// is absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	d := time.Duration(0)
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, refreshRetryMin), refreshRetryMax)
}

// userInfo is a userinfo answer.
type userInfo struct {
	subject string
	claims  map[string]any
}

// refreshCalls remembers recent refreshes by the refresh token they used
// (its SHA-256): concurrent requests of one session share one call, and for
// refreshReuse afterwards a request still carrying the old token gets the
// same outcome instead of presenting a used token to the IdP. An
// unavailable IdP's outcome is remembered for its retry wait only
// (unavailableError; refreshRetryMin for another cause), so the next try
// comes soon but a session never asks more often.
type refreshCalls struct {
	mu sync.Mutex
	m  map[[32]byte]*refreshCall
}

type refreshCall struct {
	done chan struct{}
	res  refreshed
	err  error
	at   time.Time     // when it ended; zero while in flight (guarded by refreshCalls.mu)
	keep time.Duration // how long after at it answers (guarded by refreshCalls.mu)
}

// fresh reports whether call answers a request at now.
func (call *refreshCall) fresh(now time.Time) bool {
	return call.at.IsZero() || now.Sub(call.at) < call.keep
}

func newRefreshCalls() *refreshCalls { return &refreshCalls{m: map[[32]byte]*refreshCall{}} }

// do returns the outcome of the refresh of token: a remembered one, the one
// in flight, or fn's.
func (c *refreshCalls) do(token string, now func() time.Time, fn func() (refreshed, error)) (refreshed, error) {
	key := sha256.Sum256([]byte(token))
	c.mu.Lock()
	if call, ok := c.m[key]; ok && call.fresh(now()) {
		c.mu.Unlock()
		<-call.done
		return call.res, call.err
	}
	if len(c.m) >= maxRefreshCalls {
		for k, call := range c.m {
			if !call.fresh(now()) {
				delete(c.m, k)
			}
		}
	}
	call := &refreshCall{done: make(chan struct{})}
	remembered := len(c.m) < maxRefreshCalls
	if remembered {
		c.m[key] = call
	}
	c.mu.Unlock()

	call.res, call.err = fn()
	c.mu.Lock()
	call.at = now()
	call.keep = refreshReuse
	var ue *unavailableError
	switch {
	case errors.As(call.err, &ue):
		call.keep = ue.retry
	case errors.Is(call.err, errRefreshUnavailable):
		call.keep = refreshRetryMin
	}
	c.mu.Unlock()
	close(call.done)
	return call.res, call.err
}

// revoke asks the IdP to revoke a refresh token (RFC 7009), so a copy of
// the session cookie cannot re-check after logout. It is best effort: the
// outcome is logged, the logout goes on.
func (a *Auth) revoke(ctx context.Context, rt string) error {
	if a.revocation == "" || rt == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
	defer cancel()
	form := "token=" + url.QueryEscape(rt) + "&token_type_hint=refresh_token"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.revocation, strings.NewReader(form))
	if err != nil {
		return fmt.Errorf("auth: revoke: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(a.cfg.ClientID), url.QueryEscape(a.cfg.ClientSecret))
	resp, err := a.idp.Do(req)
	if err != nil {
		return fmt.Errorf("auth: revoke: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("auth: revoke: status %d", resp.StatusCode)
	}
	return nil
}

// revokeTimeout bounds the revocation call at logout.
const revokeTimeout = 5 * time.Second
