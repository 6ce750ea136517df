package devidp

import "net/http"

// loginSubmit answers POST /login, the sign-in form: it shows the form again
// after a wrong password, and otherwise accepts or rejects Hydra's login
// request and sends the browser on to Hydra.
func (a *app) loginSubmit(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return &appError{Status: http.StatusBadRequest, Public: "The form could not be read.", Err: err}
	}
	challenge, err := parseChallenge("login_challenge", r.PostForm.Get("login_challenge"))
	if err != nil {
		return err
	}
	d := decideLogin(a.dir.snapshot(), loginForm{
		Username: r.PostForm.Get("username"),
		Password: r.PostForm.Get("password"),
		Cancel:   r.PostForm.Get("action") == "cancel",
	})
	var to string
	switch d.Outcome {
	case loginRetry:
		a.render(w, http.StatusOK, loginPage, loginProps{
			Challenge: challenge,
			Username:  r.PostForm.Get("username"),
			Error:     d.Message,
		})
		return nil
	case loginCancel:
		to, err = a.admin.RejectLogin(r.Context(), challenge, rejectRequest{
			Error:            cancelError,
			ErrorDescription: "The user cancelled the sign-in.",
		})
	case loginAccept:
		to, err = a.admin.AcceptLogin(r.Context(), challenge, acceptLogin{Subject: d.Subject, Remember: false})
	}
	if err != nil {
		return fromHydra(err, "sign-in request")
	}
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}
