package devidp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// adminAPI is the part of Hydra's admin API the login and consent app uses.
// The app declares it so its tests can substitute a fake.
type adminAPI interface {
	LoginRequest(ctx context.Context, challenge string) (*loginRequest, error)
	AcceptLogin(ctx context.Context, challenge string, body acceptLogin) (string, error)
	RejectLogin(ctx context.Context, challenge string, body rejectRequest) (string, error)
	ConsentRequest(ctx context.Context, challenge string) (*consentRequest, error)
	AcceptConsent(ctx context.Context, challenge string, body acceptConsent) (string, error)
	AcceptLogout(ctx context.Context, challenge string) (string, error)
}

// loginRequest is Hydra's OAuth2LoginRequest, reduced to what the app reads.
type loginRequest struct {
	Challenge      string   `json:"challenge"`
	Skip           bool     `json:"skip"`
	Subject        string   `json:"subject"`
	RequestedScope []string `json:"requested_scope"`
	Client         struct {
		ClientID   string `json:"client_id"`
		ClientName string `json:"client_name"`
	} `json:"client"`
}

// consentRequest is Hydra's OAuth2ConsentRequest, reduced to what the app
// reads.
type consentRequest struct {
	Challenge                    string   `json:"challenge"`
	Skip                         bool     `json:"skip"`
	Subject                      string   `json:"subject"`
	RequestedScope               []string `json:"requested_scope"`
	RequestedAccessTokenAudience []string `json:"requested_access_token_audience"`
}

// acceptLogin is the body of PUT .../login/accept. Hydra rejects unknown
// fields.
type acceptLogin struct {
	Subject  string `json:"subject"`
	Remember bool   `json:"remember"`
}

// rejectRequest is the body of PUT .../login/reject.
type rejectRequest struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description,omitempty"`
}

// acceptConsent is the body of PUT .../consent/accept.
type acceptConsent struct {
	GrantScope               []string       `json:"grant_scope"`
	GrantAccessTokenAudience []string       `json:"grant_access_token_audience"`
	Remember                 bool           `json:"remember"`
	Session                  consentSession `json:"session"`
}

// consentSession holds the extra claims of the tokens Hydra will issue.
type consentSession struct {
	IDToken     map[string]any `json:"id_token,omitempty"`
	AccessToken map[string]any `json:"access_token,omitempty"`
}

// redirectTo is Hydra's answer to accept and reject calls (and, with status
// 410, to a request that was already handled).
type redirectTo struct {
	RedirectTo string `json:"redirect_to"`
}

// hydraError is a non-2xx answer of Hydra's admin API.
type hydraError struct {
	Op          string // e.g. "get login request"
	Status      int
	Code        string // Hydra's "error", e.g. "not_found"
	Description string
	RedirectTo  string // set with status 410 Gone: the request was already handled
}

func (e *hydraError) Error() string {
	msg := fmt.Sprintf("devidp: hydra admin: %s: status %d", e.Op, e.Status)
	if e.Code != "" {
		msg += ": " + e.Code
	}
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// hydraAdmin calls Hydra's admin API over HTTP.
type hydraAdmin struct {
	base   string // e.g. http://127.0.0.1:4445
	client *http.Client
}

const (
	loginPath   = "/admin/oauth2/auth/requests/login"
	consentPath = "/admin/oauth2/auth/requests/consent"
	logoutPath  = "/admin/oauth2/auth/requests/logout"
)

func (h *hydraAdmin) LoginRequest(ctx context.Context, challenge string) (*loginRequest, error) {
	var out loginRequest
	err := h.do(ctx, "get login request", http.MethodGet, loginPath, "login_challenge", challenge, nil, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func (h *hydraAdmin) AcceptLogin(ctx context.Context, challenge string, body acceptLogin) (string, error) {
	return h.redirect(ctx, "accept login", loginPath+"/accept", "login_challenge", challenge, body)
}

func (h *hydraAdmin) RejectLogin(ctx context.Context, challenge string, body rejectRequest) (string, error) {
	return h.redirect(ctx, "reject login", loginPath+"/reject", "login_challenge", challenge, body)
}

func (h *hydraAdmin) ConsentRequest(ctx context.Context, challenge string) (*consentRequest, error) {
	var out consentRequest
	err := h.do(ctx, "get consent request", http.MethodGet, consentPath, "consent_challenge", challenge, nil, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func (h *hydraAdmin) AcceptConsent(ctx context.Context, challenge string, body acceptConsent) (string, error) {
	return h.redirect(ctx, "accept consent", consentPath+"/accept", "consent_challenge", challenge, body)
}

func (h *hydraAdmin) AcceptLogout(ctx context.Context, challenge string) (string, error) {
	return h.redirect(ctx, "accept logout", logoutPath+"/accept", "logout_challenge", challenge, nil)
}

// redirect PUTs body and returns the redirect_to of the answer.
func (h *hydraAdmin) redirect(ctx context.Context, op, path, param, challenge string, body any) (string, error) {
	var out redirectTo
	if err := h.do(ctx, op, http.MethodPut, path, param, challenge, body, &out); err != nil {
		return "", err
	}
	if out.RedirectTo == "" {
		return "", fmt.Errorf("devidp: hydra admin: %s: answer has no redirect_to", op)
	}
	return out.RedirectTo, nil
}

// do sends one JSON request to the admin API and decodes a 2xx answer into
// out; other answers become a *hydraError.
func (h *hydraAdmin) do(ctx context.Context, op, method, path, param, challenge string, in, out any) error {
	u := h.base + path + "?" + url.Values{param: {challenge}}.Encode()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("devidp: hydra admin: %s: %w", op, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("devidp: hydra admin: %s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("devidp: hydra admin: %s: %w", op, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("devidp: hydra admin: %s: read answer: %w", op, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeHydraError(op, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("devidp: hydra admin: %s: decode answer: %w", op, err)
	}
	return nil
}

func decodeHydraError(op string, status int, raw []byte) error {
	var body struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
		ErrorHint        string `json:"error_hint"`
		RedirectTo       string `json:"redirect_to"`
	}
	e := &hydraError{Op: op, Status: status}
	if json.Unmarshal(raw, &body) == nil {
		e.Code = body.Error
		e.Description = strings.TrimSpace(body.ErrorDescription + " " + body.ErrorHint)
		e.RedirectTo = body.RedirectTo
	} else {
		e.Description = strings.TrimSpace(string(raw[:min(len(raw), 300)]))
	}
	return e
}

// asHydraError reports whether err is (or wraps) a *hydraError.
func asHydraError(err error) (*hydraError, bool) {
	var he *hydraError
	ok := errors.As(err, &he)
	return he, ok
}
