package devidp

import "html/template"

// Page names for app.render.
const (
	loginPage = "login"
	errorPage = "error"
	infoPage  = "info"
)

// loginProps is the sign-in form.
type loginProps struct {
	Challenge string
	Username  string // typed before, kept after a wrong password
	Error     string // shown above the form when not empty
}

// errorProps is an error page.
type errorProps struct {
	Title   string
	Message string
}

// infoProps is a page with a title and a sentence.
type infoProps struct {
	Title   string
	Message string
}

// pages holds the app's pages. html/template escapes every value.
var pages = template.Must(template.New("pages").Parse(`
{{define "head"}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.}}</title>
<style>
body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1f2328; margin: 0; }
main { max-width: 24rem; margin: 4rem auto; background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 1.5rem 2rem; }
h1 { font-size: 1.25rem; margin: 0 0 1.25rem; }
label { display: block; margin: 0.75rem 0 0.25rem; font-weight: 600; }
input[type=text], input[type=password] { width: 100%; box-sizing: border-box; padding: 0.5rem; font-size: 1rem; border: 1px solid #d0d7de; border-radius: 6px; }
.actions { display: flex; gap: 0.5rem; margin-top: 1.25rem; }
button { padding: 0.5rem 1rem; font-size: 1rem; border-radius: 6px; border: 1px solid #d0d7de; background: #f6f8fa; cursor: pointer; }
button.primary { background: #1f6feb; border-color: #1f6feb; color: #fff; }
.error { background: #ffebe9; border: 1px solid #ff8182; border-radius: 6px; padding: 0.5rem 0.75rem; margin: 0 0 1rem; }
</style>
</head>
<body>
<main>
{{end}}

{{define "foot"}}</main>
</body>
</html>
{{end}}

{{define "login"}}{{template "head" "Sign in to deploy-web (demo identity provider)"}}
<h1>Sign in to deploy-web (demo identity provider)</h1>
{{if .Error}}<p class="error" role="alert" data-testid="login-error">{{.Error}}</p>{{end}}
<form method="post" action="/login" data-testid="login-form">
<input type="hidden" name="login_challenge" value="{{.Challenge}}">
<label for="username">Username</label>
<input type="text" id="username" name="username" value="{{.Username}}" autocomplete="username" autocapitalize="none" spellcheck="false" required{{if not .Username}} autofocus{{end}}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required{{if .Username}} autofocus{{end}}>
<div class="actions">
<button type="submit" id="login-submit" class="primary" name="action" value="login">Sign in</button>
<button type="submit" id="login-cancel" name="action" value="cancel" formnovalidate>Cancel</button>
</div>
</form>
{{template "foot"}}{{end}}

{{define "error"}}{{template "head" .Title}}
<h1>{{.Title}}</h1>
<p data-testid="error-message">{{.Message}}</p>
{{template "foot"}}{{end}}

{{define "info"}}{{template "head" .Title}}
<h1>{{.Title}}</h1>
<p data-testid="info-message">{{.Message}}</p>
{{template "foot"}}{{end}}
`))
