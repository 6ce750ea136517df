package devidp

import "net/http"

// loginShow answers GET /login?login_challenge=C, where Hydra sends the
// browser to sign in. When Hydra already knows the subject (skip), it accepts
// at once; otherwise it shows the sign-in form.
func (a *app) loginShow(w http.ResponseWriter, r *http.Request) error {
	challenge, err := parseChallenge("login_challenge", r.URL.Query().Get("login_challenge"))
	if err != nil {
		return err
	}
	req, err := a.admin.LoginRequest(r.Context(), challenge)
	if err != nil {
		if to, ok := goneRedirect(err); ok {
			http.Redirect(w, r, to, http.StatusFound)
			return nil
		}
		return fromHydra(err, "sign-in request")
	}
	if req.Skip {
		to, err := a.admin.AcceptLogin(r.Context(), challenge, acceptLogin{Subject: req.Subject})
		if err != nil {
			return fromHydra(err, "sign-in request")
		}
		http.Redirect(w, r, to, http.StatusFound)
		return nil
	}
	a.render(w, http.StatusOK, loginPage, loginProps{Challenge: challenge})
	return nil
}
