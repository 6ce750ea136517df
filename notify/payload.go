package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
)

// fact is one labelled value of a message (cluster, namespace, ...).
type fact struct{ Title, Value string }

// message is an event as plain text pieces, before any markup.
type message struct {
	title string
	text  string
	facts []fact
	link  string // "" unless an http(s) URL
}

// describe turns an event into plain text pieces; the providers escape
// them for their markup.
func describe(e Event) message {
	e = e.bounded()
	app := e.App
	if app == "" {
		app = "an app"
	}
	var title string
	switch e.Trigger {
	case TriggerDegraded:
		title = app + " is degraded"
	case TriggerRecovered:
		title = app + " recovered"
	case TriggerApplyFailed:
		title = "Apply of " + app + " failed"
	case TriggerAutoSyncFailed:
		title = "Auto-sync of " + app + " failed"
	case TriggerDrift:
		title = app + " drifted from its desired state"
	case TriggerFreezeStart:
		title = "Freeze started for " + app
	case TriggerFreezeEnd:
		title = "Freeze ended for " + app
	case TriggerPromotionRequested:
		title = "Promotion of " + app + " requested"
	case TriggerOperated:
		title = "Day-2 action on " + app
	case TriggerTest:
		title = "Test message from deploy-web"
	default:
		title = string(e.Trigger) + ": " + app
	}
	m := message{title: title, text: e.Message}
	add := func(t, v string) {
		if v != "" {
			m.facts = append(m.facts, fact{t, v})
		}
	}
	add("Cluster", e.Cluster)
	add("Namespace", e.Namespace)
	add("Environment", e.Environment)
	add("Revision", e.Revision)
	switch {
	case e.From != "" && e.To != "":
		add("Change", e.From+" → "+e.To)
	default:
		add("From", e.From)
		add("To", e.To)
	}
	if !e.Time.IsZero() {
		add("Time", e.Time.UTC().Format(time.RFC3339))
	}
	if u, err := url.Parse(e.Link); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		// Characters that end a link in some markup, percent-encoded.
		m.link = strings.NewReplacer("<", "%3C", ">", "%3E", "|", "%7C", `"`, "%22", " ", "%20").Replace(u.String())
	}
	return m
}

// summary is the message as one line of plain text.
func (m message) summary() string {
	if m.text == "" {
		return m.title
	}
	return m.title + ": " + m.text
}

// marshal encodes v as JSON without Go's HTML escaping of <, > and &
// (receivers read JSON, not HTML; the markup escaping is each provider's).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("notify: encode payload: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// webhookPayload is the generic webhook's JSON body.
type webhookPayload struct {
	Delivery     string `json:"delivery"`
	Subscription string `json:"subscription"`
	Summary      string `json:"summary"`
	Event        Event  `json:"event"`
}

// Payload builds the body sent to a subscription's provider for ev;
// delivery is the id receivers may deduplicate on.
func Payload(p envconfig.Provider, subID, delivery string, ev Event) ([]byte, error) {
	m := describe(ev)
	switch p {
	case envconfig.ProviderWebhook:
		return marshal(webhookPayload{Delivery: delivery, Subscription: subID, Summary: m.summary(), Event: ev.bounded()})
	case envconfig.ProviderSlack:
		return marshal(slackPayload(m))
	case envconfig.ProviderTeams:
		return marshal(teamsPayload(m))
	}
	return nil, fmt.Errorf("notify: provider %q: use webhook, slack or teams", p)
}

// slackEscaper escapes the three characters Slack's mrkdwn gives meaning
// to as control sequences (<!channel>, <url|text>, entities); the rest is
// at worst formatting.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Fields   []slackText `json:"fields,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

type slackMessage struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

// slackPayload is an incoming-webhook message: a text fallback (for
// notifications) and blocks.
func slackPayload(m message) slackMessage {
	esc := slackEscaper.Replace
	head := "*" + esc(m.title) + "*"
	if m.text != "" {
		head += "\n" + esc(m.text)
	}
	blocks := []slackBlock{{Type: "section", Text: &slackText{Type: "mrkdwn", Text: head}}}
	if len(m.facts) > 0 {
		b := slackBlock{Type: "section"}
		for _, f := range m.facts {
			b.Fields = append(b.Fields, slackText{Type: "mrkdwn", Text: "*" + f.Title + "*\n" + esc(f.Value)})
		}
		blocks = append(blocks, b)
	}
	if m.link != "" {
		// In <url|text> the URL ends at '|' or '>': describe encoded both.
		blocks = append(blocks, slackBlock{Type: "context", Elements: []slackText{{Type: "mrkdwn", Text: "<" + esc(m.link) + "|Open in deploy-web>"}}})
	}
	return slackMessage{Text: esc(m.summary()), Blocks: blocks}
}

// teamsEscaper escapes what the Markdown subset of Adaptive Card text
// gives meaning to anywhere in a line: emphasis, code, links (by their
// brackets), and "{{" which would start a DATE()/TIME() function, with
// CommonMark backslash escapes. Adaptive Cards render no HTML; < and > are
// escaped anyway, for renderers that do.
var teamsEscaper = strings.NewReplacer(
	`\`, `\\`, "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "`", "\\`", "~", `\~`,
	"{", `\{`, "}", `\}`, "<", `\<`, ">", `\>`,
)

// teamsEscape escapes s for an Adaptive Card TextBlock or Fact: the
// characters above anywhere, and what starts a heading, a list or a quote
// at the start of a line.
func teamsEscape(s string) string {
	lines := strings.Split(teamsEscaper.Replace(s), "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		lead := l[:len(l)-len(trimmed)]
		switch {
		case trimmed == "":
		case strings.ContainsRune("#-+", rune(trimmed[0])):
			lines[i] = lead + `\` + trimmed
		default:
			// "1. " starts an ordered list.
			j := 0
			for j < len(trimmed) && '0' <= trimmed[j] && trimmed[j] <= '9' {
				j++
			}
			if j > 0 && j < len(trimmed) && (trimmed[j] == '.' || trimmed[j] == ')') {
				lines[i] = lead + trimmed[:j] + `\` + trimmed[j:]
			}
		}
	}
	return strings.Join(lines, "\n")
}

type teamsFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

type teamsElement struct {
	Type   string      `json:"type"`
	Text   string      `json:"text,omitempty"`
	Weight string      `json:"weight,omitempty"`
	Size   string      `json:"size,omitempty"`
	Wrap   bool        `json:"wrap,omitempty"`
	Facts  []teamsFact `json:"facts,omitempty"`
}

type teamsAction struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

type teamsCard struct {
	Schema  string         `json:"$schema"`
	Type    string         `json:"type"`
	Version string         `json:"version"`
	Body    []teamsElement `json:"body"`
	Actions []teamsAction  `json:"actions,omitempty"`
}

type teamsAttachment struct {
	ContentType string    `json:"contentType"`
	ContentURL  *string   `json:"contentUrl"`
	Content     teamsCard `json:"content"`
}

type teamsMessage struct {
	Type        string            `json:"type"`
	Attachments []teamsAttachment `json:"attachments"`
}

// teamsPayload is a message with one Adaptive Card attachment, the form
// Teams Workflows ("post to a channel when a webhook request is received")
// and incoming webhooks accept.
func teamsPayload(m message) teamsMessage {
	esc := teamsEscape
	body := []teamsElement{{Type: "TextBlock", Text: esc(m.title), Weight: "Bolder", Size: "Medium", Wrap: true}}
	if m.text != "" {
		body = append(body, teamsElement{Type: "TextBlock", Text: esc(m.text), Wrap: true})
	}
	if len(m.facts) > 0 {
		fs := teamsElement{Type: "FactSet"}
		for _, f := range m.facts {
			fs.Facts = append(fs.Facts, teamsFact{Title: f.Title, Value: esc(f.Value)})
		}
		body = append(body, fs)
	}
	card := teamsCard{Schema: "http://adaptivecards.io/schemas/adaptive-card.json", Type: "AdaptiveCard", Version: "1.4", Body: body}
	if m.link != "" {
		// Action.OpenUrl's url is a URL, not Markdown.
		card.Actions = []teamsAction{{Type: "Action.OpenUrl", Title: "Open in deploy-web", URL: m.link}}
	}
	return teamsMessage{Type: "message", Attachments: []teamsAttachment{{ContentType: "application/vnd.microsoft.card.adaptive", Content: card}}}
}
