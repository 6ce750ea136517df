package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// inboxMessage is one message the demo's inbox received.
type inboxMessage struct {
	Trigger     string `json:"trigger"`
	SignatureOK bool   `json:"signatureOk"`
}

// inbox lists what the demo's notification inbox received, newest first.
func inbox(t *testing.T) []inboxMessage {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(demoEnv.state.NotifyInbox + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msgs []inboxMessage
	if err := json.NewDecoder(resp.Body).Decode(&msgs); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestNotificationsInBrowser adds a webhook subscription to checkout from
// its app page (degraded for 30 s and recovered, to the demo's inbox, its
// HMAC key a key of the Secret deploy-web-notify), sends a test message,
// and reads the delivery log row (status 204) on the page; the inbox got
// the test message with a signature that verifies. At 1440x900 and
// 390x844, where the section fits the phone's width.
func TestNotificationsInBrowser(t *testing.T) {
	if demoEnv.state.NotifyInbox == "" {
		t.Fatal("the demo's state file names no notification inbox")
	}
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	const page = "/clusters/devcluster/apps/storefront/checkout"
	navigate(t, ctx, page, `[data-testid=subscription-form]`)
	before := len(texts(t, ctx, `[data-testid=subscription]`))
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=trigger-degraded]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=trigger-recovered]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=degraded-for]`), "30"),
		chromedp.SetValue(chromedp.CSS(`[data-testid=provider]`), "webhook"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=url]`), demoEnv.state.NotifyInbox+"/hook"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=secret-key]`), "demo-inbox"),
		chromedp.Click(chromedp.CSS(`[data-testid=subscription-create]`)),
	); err != nil {
		screenshot(t, ctx, "create-failed")
		t.Fatal(err)
	}
	waitFor(t, ctx, "the new subscription on the page", func() bool {
		return len(texts(t, ctx, `[data-testid=subscription]`)) == before+1
	})
	sub := `[data-testid=subscription]:last-of-type`
	if got := texts(t, ctx, sub+` [data-testid=subscription-triggers]`); len(got) != 1 || got[0] != "degraded for 30s, recovered" {
		t.Errorf("triggers shown = %q, want \"degraded for 30s, recovered\"", got)
	}
	if got := texts(t, ctx, sub+` [data-testid=subscription-url]`); len(got) != 1 || got[0] != demoEnv.state.NotifyInbox+"/hook" {
		t.Errorf("url shown = %q, want %s/hook", got, demoEnv.state.NotifyInbox)
	}
	sent := len(inbox(t))
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sub+` [data-testid=subscription-test]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the test delivery in the log", func() bool {
		return len(texts(t, ctx, sub+` [data-testid=delivery-row]`)) > 0
	})
	if got := texts(t, ctx, sub+` [data-testid=delivery-row] [data-testid=delivery-status]`); len(got) == 0 || got[0] != "204" {
		t.Errorf("delivery status = %q, want 204 (the inbox's answer)", got)
	}
	msgs := inbox(t)
	if len(msgs) != sent+1 || msgs[0].Trigger != "test" || !msgs[0].SignatureOK {
		t.Errorf("inbox = %+v (had %d), want one more: the test message, its signature verified", msgs, sent)
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		navigate(t, ctx, page+"#notifications", `[data-testid=delivery-row]`)
		if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`#notifications`)), chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "notifications-"+size.name)
		if size.phone {
			checkNoSideScroll(t, ctx, "notifications-"+size.name)
			checkNotCramped(t, ctx, "notifications-"+size.name)
		}
	}
	// Leave checkout as it was for the other tests.
	emulateScreen(t, ctx, screenSizes()[0])
	navigate(t, ctx, page, `[data-testid=subscription]`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sub+` [data-testid=subscription-delete]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the subscription gone", func() bool {
		return len(texts(t, ctx, `[data-testid=subscription]`)) == before
	})
}
