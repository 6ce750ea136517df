package devidp

import (
	"errors"
	"net/http"
)

// maxChallenge bounds a challenge's length. Hydra v2.3 challenges carry the
// whole encrypted flow and run to a few kilobytes.
const maxChallenge = 16 << 10

// parseChallenge checks a login, consent or logout challenge taken from a
// request: present, not huge, and made of the base64url and UUID characters
// Hydra uses.
func parseChallenge(name, v string) (string, error) {
	if v == "" {
		return "", &appError{Status: http.StatusBadRequest, Public: "The link is missing its " + name + " parameter. Start again from deploy-web."}
	}
	if len(v) > maxChallenge {
		return "", &appError{Status: http.StatusBadRequest, Public: "The " + name + " parameter is too long."}
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '=' || c == '.' || c == '~'
		if !ok {
			return "", &appError{Status: http.StatusBadRequest, Public: "The " + name + " parameter is malformed."}
		}
	}
	return v, nil
}

// fromHydra turns an error of Hydra's admin API into an appError. what names
// the request for the person reading the page, e.g. "sign-in request".
func fromHydra(err error, what string) error {
	he, ok := asHydraError(err)
	switch {
	case !ok:
		return &appError{Status: http.StatusBadGateway, Public: "The identity provider could not be reached. Try again in a moment.", Err: err}
	case he.Status >= 500:
		return &appError{Status: http.StatusBadGateway, Public: "The identity provider failed to handle the " + what + ". Try again in a moment.", Err: err}
	default:
		return &appError{Status: http.StatusBadRequest, Public: "This " + what + " is no longer valid: it has expired, was already used, or was never issued. Go back to deploy-web and start again.", Err: err}
	}
}

// goneRedirect returns where to send the browser when Hydra answered that a
// request was already handled (410 Gone with a redirect_to).
func goneRedirect(err error) (string, bool) {
	var he *hydraError
	if errors.As(err, &he) && he.Status == http.StatusGone && he.RedirectTo != "" {
		return he.RedirectTo, true
	}
	return "", false
}
