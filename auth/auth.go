package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gorilla/sessions"
	"golang.org/x/oauth2"
)

// Routes owned by this package. The handlers package mounts them, outside
// Require: login and callback must be reachable without a session, and
// logout checks its own request (see HandleLogout).
const (
	LoginPath    = "/auth/login"
	CallbackPath = "/auth/callback"
	LogoutPath   = "/auth/logout"
)

// Cookie names. With Secure cookies (the default) each name carries the
// HostPrefix: "__Host-dw_session".
const (
	SessionCookie = "dw_session"
	LoginCookie   = "dw_login"
	HostPrefix    = "__Host-"
)

// Denial reasons passed to the Denier by Require and HandleLogout.
const (
	ReasonUnauthenticated = "unauthenticated"
	ReasonInvalidBearer   = "unauthenticated: invalid bearer token"
	ReasonNotAdmin        = "forbidden: not a superadmin"
	ReasonCSRF            = "csrf token missing or invalid"
	ReasonCrossOrigin     = "forbidden: cross-origin request"
	// ReasonRecheckUnavailable: the session is due for its re-check and the
	// IdP could not be asked (503); the session is kept for the next try.
	ReasonRecheckUnavailable = "the identity provider could not re-check your access: try again in a moment"
	// ReasonSessionEnded: the session's re-check ended it (the IdP
	// refused the refresh, or the person may enter no longer); a page
	// request gets a 401 page saying so, not a silent redirect to the login.
	ReasonSessionEnded = "signed out: the identity provider no longer vouches for this session"
)

// loginTTL bounds the login cookie (state, nonce, PKCE verifier).
const loginTTL = 10 * time.Minute

// exchangeTimeout bounds the code exchange with the IdP.
const exchangeTimeout = 15 * time.Second

// Denier renders a denial: an HTML error page, a JSON error or an HTMX
// fragment, with the given status (401 or 403 from Require; 401, 403 or 500
// from the login handlers). The handlers package supplies one that draws the
// site's own pages. reason is one of the Reason constants or a short
// "login failed: ..." text, safe to show; it never carries a token.
//
// For ReasonNotAdmin the request's context carries the Identity and CSRF
// token (FromContext, CSRFToken), so the page can say who is signed in and
// offer a logout form; for every other denial it carries none.
type Denier interface {
	Deny(w http.ResponseWriter, r *http.Request, status int, reason string)
}

// Auth is the authentication boundary: OIDC login, cookie sessions, the
// Require middleware. It is safe for concurrent use; build it once with New.
type Auth struct {
	cfg Config
	// idp carries every request to the identity provider (idpClient).
	idp        *http.Client
	log        *slog.Logger
	denier     Denier
	verifier   *oidc.IDTokenVerifier
	oauth      oauth2.Config
	endSession string // IdP end_session_endpoint, "" when unused
	revocation string // IdP revocation_endpoint, "" when not advertised
	// userInfo reads the IdP's userinfo with a token (nil without a
	// userinfo endpoint): the re-check's fallback when a refresh answer
	// has no ID token.
	userInfo    func(context.Context, oauth2.TokenSource) (userInfo, error)
	refreshes   *refreshCalls
	sessions    *sessions.CookieStore
	logins      *sessions.CookieStore
	crossOrigin *http.CrossOriginProtection
	now         func() time.Time
}

// New validates cfg, runs OIDC discovery against cfg.IssuerURL once and
// builds the ID-token verifier. It fails on any bad configuration: empty
// required fields, bad session keys, insecure cookies off loopback, a
// discovery failure or issuer mismatch. A nil log discards; a nil deny
// writes plain-text errors.
func New(ctx context.Context, cfg Config, log *slog.Logger, deny Denier) (*Auth, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if deny == nil {
		deny = plainDenier{}
	}
	a := &Auth{cfg: cfg, log: log, denier: deny, now: time.Now, idp: idpClient(cfg)}

	a.crossOrigin = http.NewCrossOriginProtection()
	for _, o := range cfg.TrustedOrigins {
		if err := a.crossOrigin.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("auth: config: TrustedOrigins: %w", err)
		}
	}

	provider, err := oidc.NewProvider(a.clientContext(ctx), cfg.IssuerURL)
	if err != nil {
		return nil, fmt.Errorf("auth: oidc discovery at %s: %w", cfg.IssuerURL, err)
	}
	a.oauth = oauth2.Config{
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		Endpoint:     provider.Endpoint(),
		RedirectURL:  cfg.RedirectURL,
		Scopes:       cfg.Scopes,
	}
	if a.oauth.Endpoint.AuthURL == "" || a.oauth.Endpoint.TokenURL == "" {
		return nil, fmt.Errorf("auth: oidc discovery at %s: no authorization or token endpoint", cfg.IssuerURL)
	}
	var meta struct {
		JWKS       string   `json:"jwks_uri"`
		Algs       []string `json:"id_token_signing_alg_values_supported"`
		EndSession string   `json:"end_session_endpoint"`
		Revocation string   `json:"revocation_endpoint"`
		UserInfo   string   `json:"userinfo_endpoint"`
		// TokenAuth are the client authentications the token endpoint
		// takes.
		TokenAuth []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := provider.Claims(&meta); err != nil {
		return nil, fmt.Errorf("auth: oidc discovery at %s: %w", cfg.IssuerURL, err)
	}
	if a.oauth.Endpoint.AuthStyle, err = tokenAuthStyle(cfg.TokenAuthMethod, meta.TokenAuth); err != nil {
		return nil, err
	}
	// Every endpoint the IdP names is held to the issuer's rule: an https
	// issuer naming a plain-http token endpoint would send the client
	// secret in the clear, a plain-http jwks_uri would take its signing
	// keys from anyone on the path.
	for _, e := range []struct{ name, url string }{
		{"authorization_endpoint", a.oauth.Endpoint.AuthURL}, {"token_endpoint", a.oauth.Endpoint.TokenURL},
		{"jwks_uri", meta.JWKS}, {"userinfo_endpoint", meta.UserInfo},
		{"end_session_endpoint", meta.EndSession}, {"revocation_endpoint", meta.Revocation},
	} {
		if e.url != "" {
			if err := requireSecureURL(e.name, e.url); err != nil {
				return nil, fmt.Errorf("auth: oidc discovery at %s: %w", cfg.IssuerURL, err)
			}
		}
	}
	if meta.JWKS == "" {
		return nil, fmt.Errorf("auth: oidc discovery at %s: no jwks_uri", cfg.IssuerURL)
	}
	// The verifier's keys come from keySet, which bounds how often a token
	// no key verifies makes it ask the IdP again (go-oidc's own key set
	// asks for every such token).
	var algs []string
	for _, alg := range signingAlgs() {
		if slices.Contains(meta.Algs, alg) {
			algs = append(algs, alg)
		}
	}
	if len(algs) == 0 {
		algs = []string{oidc.RS256}
	}
	now := func() time.Time { return a.now() }
	a.verifier = oidc.NewVerifier(cfg.IssuerURL, newKeySet(meta.JWKS, algs, cfg.HTTPClient, now), &oidc.Config{
		ClientID:             cfg.ClientID,
		SupportedSigningAlgs: algs,
		Now:                  now,
	})
	if !cfg.LocalLogout {
		a.endSession = meta.EndSession
	}
	a.revocation = meta.Revocation
	if meta.UserInfo != "" {
		a.userInfo = func(ctx context.Context, ts oauth2.TokenSource) (userInfo, error) {
			ui, err := provider.UserInfo(ctx, ts)
			if err != nil {
				return userInfo{}, err
			}
			var claims map[string]any
			if err := ui.Claims(&claims); err != nil {
				return userInfo{}, err
			}
			return userInfo{subject: ui.Subject, claims: claims}, nil
		}
	}
	a.refreshes = newRefreshCalls()

	a.sessions = newCookieStore(cfg, cfg.SessionTTL)
	a.logins = newCookieStore(cfg, loginTTL)
	return a, nil
}

// clientContext returns ctx carrying the IdP client (idpClient) for
// go-oidc and oauth2: discovery, token exchange, refresh and userinfo.
func (a *Auth) clientContext(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, a.idp)
}

// idpClient is cfg.HTTPClient (else a client with exchangeTimeout as its
// deadline) whose redirects are held to the issuer's rule (https, or http
// on loopback): a 307 or 308 to plain http would re-send a token request's
// body, the client secret in it, and the Authorization header, in the
// clear.
func idpClient(cfg Config) *http.Client {
	c := cfg.HTTPClient
	if c == nil {
		c = &http.Client{Timeout: exchangeTimeout}
	}
	return secureRedirects(c, "identity provider redirect")
}

// secureRedirects returns a copy of c that follows a redirect only to a
// URL requireSecureURL accepts, at most 10 of them; c's own CheckRedirect
// still applies after that rule.
func secureRedirects(c *http.Client, what string) *http.Client {
	out := *c
	next := out.CheckRedirect
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := requireSecureURL(what, req.URL.String()); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &out
}

// Routes returns the login, callback and logout handlers, for mounting at
// "GET "+LoginPath, "GET "+CallbackPath and "POST "+LogoutPath.
func (a *Auth) Routes() (login, callback, logout http.HandlerFunc) {
	return a.HandleLogin, a.HandleCallback, a.HandleLogout
}

// deny logs a denial at Info (never tokens or cookies) and renders it.
func (a *Auth) deny(w http.ResponseWriter, r *http.Request, status int, reason string, attrs ...any) {
	args := append([]any{
		"method", r.Method,
		"path", r.URL.Path,
		"status", status,
		"reason", reason,
	}, attrs...)
	a.log.InfoContext(r.Context(), "auth: request denied", args...)
	w.Header().Set("Cache-Control", "no-store")
	a.denier.Deny(w, r, status, reason)
}

// plainDenier is the Denier used when New is given none: a JSON error for
// API requests, plain text otherwise.
type plainDenier struct{}

func (plainDenier) Deny(w http.ResponseWriter, r *http.Request, status int, reason string) {
	if isAPI(r) || prefersJSON(r.Header.Get("Accept")) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(struct {
			Error  string `json:"error"`
			Reason string `json:"reason"`
		}{http.StatusText(status), reason})
		return
	}
	http.Error(w, http.StatusText(status)+": "+reason, status)
}
