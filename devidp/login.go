package devidp

import (
	"crypto/subtle"
	"strings"
)

// loginForm is what the person typed into the sign-in form.
type loginForm struct {
	Username string
	Password string
	Cancel   bool
}

// loginOutcome is what the app does with a submitted sign-in form.
type loginOutcome int

const (
	loginRetry  loginOutcome = iota // show the form again, with Message
	loginAccept                     // tell Hydra that Subject signed in
	loginCancel                     // tell Hydra the person declined
)

func (o loginOutcome) String() string {
	switch o {
	case loginRetry:
		return "retry"
	case loginAccept:
		return "accept"
	case loginCancel:
		return "cancel"
	}
	return "unknown"
}

// loginDecision is decideLogin's answer.
type loginDecision struct {
	Outcome loginOutcome
	Subject string // with loginAccept: the user name Hydra gets as subject
	Message string // with loginRetry: the error shown above the form
}

const (
	msgMissing  = "Enter your username and password."
	msgWrong    = "Wrong username or password."
	msgDisabled = "This account is disabled."
	cancelError = "access_denied"
)

// decideLogin decides what a submitted sign-in form leads to. It has no
// side effects, so tests check it directly.
func decideLogin(users []User, f loginForm) loginDecision {
	if f.Cancel {
		return loginDecision{Outcome: loginCancel}
	}
	name := strings.TrimSpace(f.Username)
	if name == "" || f.Password == "" {
		return loginDecision{Outcome: loginRetry, Message: msgMissing}
	}
	u, ok := findUser(users, name)
	if !ok {
		// Compare anyway, so an unknown name costs the same as a wrong password.
		subtle.ConstantTimeCompare([]byte(f.Password), []byte(f.Password+"x"))
		return loginDecision{Outcome: loginRetry, Message: msgWrong}
	}
	if subtle.ConstantTimeCompare([]byte(f.Password), []byte(u.Password)) != 1 {
		return loginDecision{Outcome: loginRetry, Message: msgWrong}
	}
	if u.Disabled {
		return loginDecision{Outcome: loginRetry, Message: msgDisabled}
	}
	return loginDecision{Outcome: loginAccept, Subject: u.Username}
}

// findUser returns the user with the given name.
func findUser(users []User, name string) (User, bool) {
	for _, u := range users {
		if u.Username == name {
			return u, true
		}
	}
	return User{}, false
}
