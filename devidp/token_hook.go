package devidp

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
)

// maxHookBody bounds a token hook request from Hydra.
const maxHookBody = 256 << 10

// tokenHookRequest is the part of Hydra's token hook request the app
// reads: the session's subject and the request's grant types.
type tokenHookRequest struct {
	Session struct {
		IDToken struct {
			Subject string `json:"subject"`
			Claims  struct {
				Subject string `json:"sub"`
			} `json:"id_token_claims"`
		} `json:"id_token"`
	} `json:"session"`
	Request struct {
		GrantTypes []string `json:"grant_types"`
	} `json:"request"`
}

// subject is the user the tokens are for.
func (r tokenHookRequest) subject() string {
	if s := r.Session.IDToken.Subject; s != "" {
		return s
	}
	return r.Session.IDToken.Claims.Subject
}

// tokenHookAnswer is the body of a 200 answer: the claims of the tokens.
type tokenHookAnswer struct {
	Session consentSession `json:"session"`
}

// decideTokenHook decides the answer to a token hook: a refresh of a known,
// enabled user gets the user's current claims (200); of an unknown or
// disabled user, a refusal (403, which Hydra turns into access_denied);
// every other grant keeps the claims given at consent (204).
func decideTokenHook(users []User, req tokenHookRequest) (int, map[string]any) {
	if !slices.Contains(req.Request.GrantTypes, "refresh_token") {
		return http.StatusNoContent, nil
	}
	u, ok := findUser(users, req.subject())
	if !ok || u.Disabled {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, idTokenClaims(u)
}

// tokenHook answers Hydra's token hook (POST hookPath).
func (a *app) tokenHook(w http.ResponseWriter, r *http.Request) {
	var req tokenHookRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, maxHookBody)).Decode(&req); err != nil {
		a.log.Error("devidp: token hook: bad request", "err", err)
		http.Error(w, "bad token hook request", http.StatusBadRequest)
		return
	}
	status, claims := decideTokenHook(a.dir.snapshot(), req)
	a.log.Info("devidp: token hook", "subject", req.subject(), "grant_types", req.Request.GrantTypes, "status", status)
	if status != http.StatusOK {
		w.WriteHeader(status)
		return
	}
	b, err := json.Marshal(tokenHookAnswer{Session: consentSession{IDToken: claims, AccessToken: map[string]any{}}})
	if err != nil {
		http.Error(w, "encode", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
