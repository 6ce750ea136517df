package templates

import "github.com/a-h/templ"

// The theme choices, kept in the ThemeCookie cookie: light and dark set
// <html data-theme>, system (or no cookie) follows prefers-color-scheme.
// app.css draws both from one set of custom properties (light-dark()).
const (
	ThemeSystem = "system"
	ThemeLight  = "light"
	ThemeDark   = "dark"
	// ThemeCookie names the cookie app.js writes when the person picks a
	// theme and the server reads, so the first paint has the theme.
	ThemeCookie = "theme"
)

// themeOption is one entry of the top bar's theme picker.
type themeOption struct{ Value, Label string }

func themeChoices() []themeOption {
	return []themeOption{{ThemeSystem, "System"}, {ThemeLight, "Light"}, {ThemeDark, "Dark"}}
}

// themeChoice is the picker's value for a theme (system unless light or
// dark).
func themeChoice(theme string) string {
	if theme == ThemeLight || theme == ThemeDark {
		return theme
	}
	return ThemeSystem
}

// themeAttrs is <html data-theme="light|dark">, or nothing to follow the
// system.
func themeAttrs(theme string) templ.Attributes {
	if c := themeChoice(theme); c != ThemeSystem {
		return templ.Attributes{"data-theme": c}
	}
	return nil
}
