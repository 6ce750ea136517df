package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/chromedp/chromedp"
)

// coldFirstRow starts a fresh headless Chromium, signs in through the IdP's
// form, and then times a navigation to the fleet page until its first row
// is visible (a cold browser: new profile, nothing cached but the login).
// It returns 0 and a note when Chromium is missing or fails.
func coldFirstRow(ctx context.Context, chromium, base, user, pass string) (time.Duration, string) {
	if _, err := os.Stat(chromium); err != nil {
		return 0, "not measured: no Chromium at " + chromium
	}
	profile, err := os.MkdirTemp("", "benchcluster-chromium-")
	if err != nil {
		return 0, "not measured: " + err.Error()
	}
	defer os.RemoveAll(profile)
	actx, cancelA := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1440, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	bctx, cancelT := context.WithTimeout(bctx, 3*time.Minute)
	defer cancelT()
	if err := chromedp.Do(bctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), user),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), pass),
		chromedp.Click(chromedp.ID(`login-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`header.topbar`)),
		chromedp.Navigate("about:blank"),
	); err != nil {
		return 0, fmt.Sprintf("not measured: browser login failed: %v", err)
	}
	begin := time.Now()
	if err := chromedp.Do(bctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-testid=app-row]`)),
	); err != nil {
		return 0, fmt.Sprintf("not measured: %v", err)
	}
	return time.Since(begin), ""
}
