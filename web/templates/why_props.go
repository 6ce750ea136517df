package templates

import (
	"time"

	"github.com/hanzoai/deploy-web/why"
)

// WhyPanelProps are the props of WhyPanel: one App's answer.
type WhyPanelProps struct {
	// Name is the App's name; URL the panel's own refresh.
	Name, URL string
	Answer    why.Answer
	// Partial: the answer left the promotion checks out (a page's first
	// paint does not wait for Prometheus), so the panel asks again at once.
	Partial bool
}

// trigger is when the panel refreshes itself.
func (p WhyPanelProps) trigger() string {
	if p.Partial {
		return "load, every 10s"
	}
	return "every 10s"
}

// WhyViewProps are the props of WhyView, the panel as a page of its own
// (its URL opened outside the app page).
type WhyViewProps struct {
	Layout LayoutProps
	// AppURL is the App's page.
	AppURL string
	Panel  WhyPanelProps
}

// EnvWhyProps are the props of EnvWhyPanel: the Apps of an environment
// that have a reason, each with its reasons.
type EnvWhyProps struct {
	Env, URL string
	Apps     []EnvWhyApp
	// Checked counts the Apps answered; More those past the list's bound.
	Checked, More int
	// Unavailable says why no Apps could be listed ("" when they were).
	Unavailable string
}

// EnvWhyApp is one App of EnvWhyPanel.
type EnvWhyApp struct {
	Name, Href string
	Answer     why.Answer
}

// whyKindText is a reason's kind as the panels label it.
func whyKindText(k why.Kind) string {
	switch k {
	case why.NotApplied:
		return "not applied"
	}
	return string(k)
}

// whyUntil is a reason's end as the panels show it.
func whyUntil(t *time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
