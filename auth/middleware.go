package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/internal/actor"
)

// Identity is the authenticated user of a request that passed Require.
type Identity struct {
	Subject string // the IdP's "sub"
	Email   string
	Name    string
	// EmailVerified is the "email_verified" claim: roles match an email
	// binding only when it is true.
	EmailVerified bool
	// Groups are the person's groups that the roles file names (of the
	// Config.GroupsClaim claim; none without a roles file).
	Groups GroupList
	// Issuer is the ID token's "iss".
	Issuer string
	// Admin is IsAdmin evaluated for this request (from the admin-claim
	// value stored at login, or the bearer token's claims). Without a
	// roles file it is true on every request that reaches a handler behind
	// Require; with one, Require admits anyone holding a role.
	Admin bool
	// Bearer is true when the request was authenticated by an
	// Authorization: Bearer ID token rather than a session cookie.
	Bearer bool
	// Expires is when the session (or bearer token) stops being valid.
	Expires time.Time
	// Recheck is when a session is next re-checked with the IdP (zero for
	// a bearer token): a long-lived stream should end by then, so that its
	// reconnect passes Require again.
	Recheck time.Time
}

// Actor is who the identity is as every record, commit and log line
// names them (actor.Actor, whose String is the one way to print it): the
// email, subject, groups and display name; the session's role (Admin,
// Bearer, expiry) stays here.
func (id Identity) Actor() actor.Actor {
	return actor.Actor{Email: id.Email, Subject: id.Subject, Groups: id.Groups.Slice(), Name: id.Name}
}

type ctxKey struct{}

type ctxValue struct {
	id   Identity
	csrf string
}

// NewContext returns ctx carrying id and the CSRF token, as Require does.
// It is meant for tests of handlers that sit behind Require.
func NewContext(ctx context.Context, id Identity, csrfToken string) context.Context {
	return context.WithValue(ctx, ctxKey{}, ctxValue{id: id, csrf: csrfToken})
}

// FromContext returns the Identity Require put in ctx.
func FromContext(ctx context.Context) (Identity, bool) {
	v, ok := ctx.Value(ctxKey{}).(ctxValue)
	return v.id, ok
}

// CSRFToken returns the session's CSRF token for templates to put in forms
// (field "csrf_token") or HTMX headers ("X-CSRF-Token"). It is "" for bearer
// requests and outside Require.
func CSRFToken(ctx context.Context) string {
	v, _ := ctx.Value(ctxKey{}).(ctxValue)
	return v.csrf
}

// Require is the fail-closed middleware in front of every protected route.
//
// The identity comes from the session cookie or, on the JSON API (paths
// under /v1/) only, from an "Authorization: Bearer <ID token>" header
// verified like a login's ID token (issuer, audience, expiry, signature). A
// present but invalid Authorization header on the API is a denial even if a
// valid cookie is present too.
//
// Unsafe methods (all but GET, HEAD, OPTIONS) are first checked by
// net/http's CrossOriginProtection (403), and with a cookie session also
// need the session's CSRF token in the X-CSRF-Token header or the
// csrf_token form field (403). Without an identity the response is a 302 to
// the login page for an HTML GET, 401 with HX-Redirect for HTMX, 401 for
// JSON. Without a roles file (Config.Roles) an identity that fails IsAdmin
// gets 403 (ReasonNotAdmin); with one, an identity with no role at all gets
// 403 (ReasonNoRole) and anyone else goes on, each route deciding its own
// action (handlers' authorize). On success the Identity and
// CSRF token are in the request's context (FromContext, CSRFToken).
//
// A cookie session older than Config.SessionRecheck since login or its last
// re-check is re-checked with the IdP first (see recheck): a refused
// refresh, another subject or a person who lost the right to enter
// (mayEnter: the admin claim, or with a roles file any role) clears the
// session: a page request gets a 401 page saying so (ReasonSessionEnded),
// any other is answered like a request without one; an IdP that cannot be
// asked is a 503 (the session is kept for the next try); otherwise the
// updated session (rotated refresh token, fresh claims) is stored and the
// request goes on with it.
func (a *Auth) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		unsafe := !isSafeMethod(r.Method)
		if unsafe {
			if err := a.crossOrigin.Check(r); err != nil {
				a.deny(w, r, http.StatusForbidden, ReasonCrossOrigin)
				return
			}
		}

		if isAPI(r) && len(r.Header.Values("Authorization")) > 0 {
			id, err := a.bearerIdentity(r)
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				a.deny(w, r, http.StatusUnauthorized, ReasonInvalidBearer, "error", err.Error())
				return
			}
			if !a.mayEnter(id) {
				a.deny(w, r.WithContext(NewContext(r.Context(), id, "")), http.StatusForbidden, a.refusal(), "subject", id.Subject, "email", id.Email)
				return
			}
			next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), id, "")))
			return
		}

		s, err := a.readSession(r)
		if err != nil {
			if !errors.Is(err, errNoCookie) {
				a.clearCookie(w, a.cookieName(SessionCookie))
			}
			a.unauthenticated(w, r, err)
			return
		}
		if !a.now().Before(time.Unix(s.Checked, 0).Add(a.cfg.SessionRecheck)) {
			ns, outcome, why := a.recheck(r.Context(), s)
			switch outcome {
			case recheckSignOut:
				a.clearCookie(w, a.cookieName(SessionCookie))
				a.log.InfoContext(r.Context(), "auth: session ended at its re-check",
					"subject", s.Subject, "email", s.Email, "reason", why)
				if decideUnauthenticated(r) == answerRedirect {
					a.deny(w, r, http.StatusUnauthorized, ReasonSessionEnded, "error", why)
					return
				}
				a.unauthenticated(w, r, errors.New("auth: session ended: "+why))
				return
			case recheckUnavailable:
				a.deny(w, r, http.StatusServiceUnavailable, ReasonRecheckUnavailable,
					"subject", s.Subject, "email", s.Email, "error", why)
				return
			}
			if err := writeCookie(a.sessions, w, r, a.cookieName(SessionCookie), ns); err != nil {
				a.deny(w, r, http.StatusInternalServerError, "could not store the session", "subject", s.Subject, "error", err.Error())
				return
			}
			a.log.DebugContext(r.Context(), "auth: session re-checked", "subject", ns.Subject, "email", ns.Email, "admin", a.isAdmin(ns))
			s = ns
		}
		id := a.identity(s)
		if !a.mayEnter(id) {
			a.deny(w, r.WithContext(NewContext(r.Context(), id, s.CSRF)), http.StatusForbidden, a.refusal(), "subject", id.Subject, "email", id.Email)
			return
		}
		if unsafe && !validCSRF(r, s.CSRF) {
			a.deny(w, r, http.StatusForbidden, ReasonCSRF, "subject", id.Subject, "email", id.Email)
			return
		}
		next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), id, s.CSRF)))
	})
}

// unauthenticated answers a request that has no valid identity.
func (a *Auth) unauthenticated(w http.ResponseWriter, r *http.Request, cause error) {
	attrs := []any{}
	if !errors.Is(cause, errNoCookie) {
		attrs = append(attrs, "error", cause.Error())
	}
	switch decideUnauthenticated(r) {
	case answerJSON:
		a.deny(w, r, http.StatusUnauthorized, ReasonUnauthenticated, attrs...)
	case answerHTMX:
		w.Header().Set("HX-Redirect", LoginPath)
		a.deny(w, r, http.StatusUnauthorized, ReasonUnauthenticated, attrs...)
	case answerRedirect:
		a.log.InfoContext(r.Context(), "auth: request denied",
			append([]any{"method", r.Method, "path", r.URL.Path, "status", http.StatusFound, "reason", ReasonUnauthenticated}, attrs...)...)
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, LoginPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
	default:
		a.deny(w, r, http.StatusUnauthorized, ReasonUnauthenticated, attrs...)
	}
}

// unauthenticatedAnswer is how Require answers a request without identity.
type unauthenticatedAnswer int

const (
	answerDeny     unauthenticatedAnswer = iota // 401 through the Denier
	answerJSON                                  // 401 through the Denier, JSON client
	answerHTMX                                  // 401 with HX-Redirect to the login page
	answerRedirect                              // 302 to the login page
)

// decideUnauthenticated picks the answer for a request without identity.
func decideUnauthenticated(r *http.Request) unauthenticatedAnswer {
	switch {
	case isAPI(r):
		return answerJSON
	case r.Header.Get("HX-Request") == "true":
		return answerHTMX
	case prefersJSON(r.Header.Get("Accept")):
		return answerJSON
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		return answerRedirect
	default:
		return answerDeny
	}
}

// bearerIdentity verifies the request's Authorization: Bearer ID token.
func (a *Auth) bearerIdentity(r *http.Request) (Identity, error) {
	values := r.Header.Values("Authorization")
	if len(values) != 1 {
		return Identity{}, errors.New("auth: more than one Authorization header")
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return Identity{}, errors.New("auth: Authorization is not a Bearer token")
	}
	idt, err := a.verifier.Verify(a.clientContext(r.Context()), token)
	if err != nil {
		return Identity{}, err
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return Identity{}, err
	}
	verified, _ := claims["email_verified"].(bool)
	return a.withRoleClaims(Identity{
		Subject: idt.Subject,
		Email:   stringClaim(claims, "email"),
		Name:    displayName(claims),
		Admin:   IsAdmin(claims, a.cfg.AdminClaim, a.cfg.AdminValue),
		Bearer:  true,
		Expires: idt.Expiry,
	}, verified, a.sessionGroups(claims), idt.Issuer), nil
}

// validCSRF reports whether r carries want, from the X-CSRF-Token header or
// the csrf_token form field, compared in constant time.
func validCSRF(r *http.Request, want string) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf_token")
	}
	return want != "" && got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func isSafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// isAPI reports whether r is for the JSON API: its path, raw and cleaned,
// is under /v1/.
func isAPI(r *http.Request) bool {
	p := r.URL.Path
	if !strings.HasPrefix(p, "/v1/") {
		return false
	}
	c := path.Clean(p)
	return c == "/v1" || strings.HasPrefix(c, "/v1/")
}

// prefersJSON reports whether an Accept header ranks application/json above
// text/html: a higher q-value, or the same q-value from a more specific
// media range ("application/json, */*" is a JSON client; "*/*" is not).
func prefersJSON(accept string) bool {
	if accept == "" {
		return false
	}
	jq, js := acceptQuality(accept, "application", "json")
	hq, hs := acceptQuality(accept, "text", "html")
	return jq > hq || (jq == hq && jq > 0 && js > hs)
}

// acceptQuality returns the q-value accept gives typ/sub, from its most
// specific matching media range, and that range's specificity (2 exact,
// 1 "typ/*", 0 "*/*"); 0, -1 when none matches.
func acceptQuality(accept, typ, sub string) (q float64, specificity int) {
	best, bestSpec := 0.0, -1
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		t, s, _ := strings.Cut(mt, "/")
		spec := -1
		switch {
		case t == typ && s == sub:
			spec = 2
		case t == typ && s == "*":
			spec = 1
		case t == "*" && s == "*":
			spec = 0
		}
		if spec < 0 || spec < bestSpec {
			continue
		}
		q := 1.0
		if qs, ok := params["q"]; ok {
			v, err := strconv.ParseFloat(qs, 64)
			if err != nil || v < 0 || v > 1 {
				continue
			}
			q = v
		}
		if spec > bestSpec {
			best, bestSpec = q, spec
		} else if q > best {
			best = q
		}
	}
	return best, bestSpec
}
