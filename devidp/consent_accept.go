package devidp

import "net/http"

// consentAccept answers GET /consent?consent_challenge=C. deploy-web is a
// first-party client, so there is no consent screen: the app grants what was
// asked for, adds the user's claims to the ID token, and sends the browser on.
func (a *app) consentAccept(w http.ResponseWriter, r *http.Request) error {
	challenge, err := parseChallenge("consent_challenge", r.URL.Query().Get("consent_challenge"))
	if err != nil {
		return err
	}
	req, err := a.admin.ConsentRequest(r.Context(), challenge)
	if err != nil {
		if to, ok := goneRedirect(err); ok {
			http.Redirect(w, r, to, http.StatusFound)
			return nil
		}
		return fromHydra(err, "consent request")
	}
	u, ok := findUser(a.dir.snapshot(), req.Subject)
	if !ok {
		return &appError{Status: http.StatusBadRequest, Public: "The signed-in user is not one of this identity provider's users. Sign in again from deploy-web."}
	}
	if u.Disabled {
		return &appError{Status: http.StatusForbidden, Public: msgDisabled}
	}
	to, err := a.admin.AcceptConsent(r.Context(), challenge, consentFor(u, req))
	if err != nil {
		return fromHydra(err, "consent request")
	}
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

// consentFor builds the consent accepted for u: every requested scope and
// audience, and the user's claims in the ID token.
func consentFor(u User, req *consentRequest) acceptConsent {
	return acceptConsent{
		GrantScope:               nonNil(req.RequestedScope),
		GrantAccessTokenAudience: nonNil(req.RequestedAccessTokenAudience),
		Session:                  consentSession{IDToken: idTokenClaims(u)},
	}
}

// idTokenClaims are the claims the app puts in u's ID tokens, at consent
// and again at each refresh (see tokenHook).
func idTokenClaims(u User) map[string]any {
	return map[string]any{
		"groups":         append([]string{}, u.Groups...), // [] rather than null
		"email":          u.Email,
		"email_verified": true,
		"name":           u.Name,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
