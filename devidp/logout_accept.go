package devidp

import "net/http"

// logoutAccept answers GET /logout?logout_challenge=C, where Hydra sends the
// browser to confirm a sign-out: it accepts without asking and sends the
// browser back to Hydra, which ends the session and redirects onwards.
func (a *app) logoutAccept(w http.ResponseWriter, r *http.Request) error {
	challenge, err := parseChallenge("logout_challenge", r.URL.Query().Get("logout_challenge"))
	if err != nil {
		return err
	}
	to, err := a.admin.AcceptLogout(r.Context(), challenge)
	if err != nil {
		return fromHydra(err, "sign-out request")
	}
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}
