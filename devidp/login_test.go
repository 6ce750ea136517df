package devidp

import "testing"

func TestDecideLogin(t *testing.T) {
	users := append(DefaultUsers(), User{Username: "gone", Password: "gone", Disabled: true})
	tests := []struct {
		name string
		form loginForm
		want loginDecision
	}{
		{"admin", loginForm{Username: "admin", Password: "admin"}, loginDecision{Outcome: loginAccept, Subject: "admin"}},
		{"viewer", loginForm{Username: "viewer", Password: "viewer"}, loginDecision{Outcome: loginAccept, Subject: "viewer"}},
		{"spaces around the name", loginForm{Username: " admin ", Password: "admin"}, loginDecision{Outcome: loginAccept, Subject: "admin"}},
		{"wrong password", loginForm{Username: "admin", Password: "viewer"}, loginDecision{Outcome: loginRetry, Message: msgWrong}},
		{"password with a space", loginForm{Username: "admin", Password: "admin "}, loginDecision{Outcome: loginRetry, Message: msgWrong}},
		{"name is case-sensitive", loginForm{Username: "Admin", Password: "admin"}, loginDecision{Outcome: loginRetry, Message: msgWrong}},
		{"unknown user", loginForm{Username: "root", Password: "admin"}, loginDecision{Outcome: loginRetry, Message: msgWrong}},
		{"empty name", loginForm{Password: "admin"}, loginDecision{Outcome: loginRetry, Message: msgMissing}},
		{"empty password", loginForm{Username: "admin"}, loginDecision{Outcome: loginRetry, Message: msgMissing}},
		{"disabled user", loginForm{Username: "gone", Password: "gone"}, loginDecision{Outcome: loginRetry, Message: msgDisabled}},
		{"disabled user, wrong password", loginForm{Username: "gone", Password: "x"}, loginDecision{Outcome: loginRetry, Message: msgWrong}},
		{"cancel", loginForm{Cancel: true}, loginDecision{Outcome: loginCancel}},
		{"cancel wins over a right password", loginForm{Username: "admin", Password: "admin", Cancel: true}, loginDecision{Outcome: loginCancel}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decideLogin(users, tt.form); got != tt.want {
				t.Errorf("decideLogin(%+v) = %+v, want %+v", tt.form, got, tt.want)
			}
		})
	}
}

func TestParseChallenge(t *testing.T) {
	tests := []struct {
		in     string
		wantOK bool
	}{
		{"", false},
		{"abc-DEF_123==", true},
		{"0f4c7ba8-5b4a-4e1f-a0e4-8f2c1b7d9e61", true},
		{"a b", false},
		{"<script>", false},
		{"a&b=c", false},
		{string(make([]byte, maxChallenge+1)), false},
	}
	for _, tt := range tests {
		_, err := parseChallenge("login_challenge", tt.in)
		if got := err == nil; got != tt.wantOK {
			t.Errorf("parseChallenge(%.20q) error = %v, want ok %v", tt.in, err, tt.wantOK)
		}
	}
}

func TestCheckUsers(t *testing.T) {
	tests := []struct {
		name   string
		users  []User
		wantOK bool
	}{
		{"defaults", DefaultUsers(), true},
		{"none", []User{}, false},
		{"empty password", []User{{Username: "a"}}, false},
		{"spaces", []User{{Username: " a", Password: "p"}}, false},
		{"twice", []User{{Username: "a", Password: "p"}, {Username: "a", Password: "q"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkUsers(tt.users); (err == nil) != tt.wantOK {
				t.Errorf("checkUsers(%v) = %v, want ok %v", tt.users, err, tt.wantOK)
			}
		})
	}
}
