package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// gitIn runs git in the demo's working clone of the manifests.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@demo.local", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@demo.local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestGitOpsLoop: the demo's dev environment follows its branch. Its
// GitOps panel shows the commit live at the branch head (auto-sync
// applied it at start); a commit pushed from the working clone goes live
// within the interval; a superadmin pauses auto-sync with a reason from
// the panel and resumes it. At 1440x900 and 390x844.
func TestGitOpsLoop(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	clone := filepath.Join(demoEnv.tmp, "demo", "manifests")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/environments/dev"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=gitops-panel]`))); err != nil {
		screenshot(t, ctx, "no-panel")
		t.Fatal(err)
	}
	// Auto-sync applied the head at start; the panel refreshes itself.
	waitVisible(t, ctx, `[data-testid=gitops-in-sync]`, 3*time.Minute)
	head := gitIn(t, clone, "rev-parse", "--short=7", "HEAD")
	if live := texts(t, ctx, `[data-testid=gitops-live] .mono`); len(live) != 1 || !strings.HasPrefix(live[0], head) {
		t.Errorf("commit live = %q, want the clone's head %s", live, head)
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		screenshot(t, ctx, "in-sync-"+size.name)
	}
	emulateScreen(t, ctx, screenSizes()[0])

	// A commit from the clone goes live within the interval (15s) and a
	// run's time.
	gitIn(t, clone, "pull", "-q")
	path := filepath.Join(clone, "base", "worker.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "replicas: 2", "replicas: 3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, clone, "commit", "-qam", "worker: 3 replicas")
	gitIn(t, clone, "push", "-q")
	next := gitIn(t, clone, "rev-parse", "HEAD")
	waitText(t, ctx, `[data-testid=gitops-live] .mono`, func(s string) bool { return strings.HasPrefix(next, s) && len(s) >= 7 }, 3*time.Minute)
	waitVisible(t, ctx, `[data-testid=autosync-last-run][data-outcome=applied]`, time.Minute)
	screenshot(t, ctx, "pushed-commit-live")

	// Pause from the panel, with a reason; resume.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`[data-testid=pause-reason]`), "e2e: release freeze"),
		chromedp.Click(chromedp.CSS(`[data-testid=autosync-pause]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=autosync-paused]`)),
	); err != nil {
		screenshot(t, ctx, "no-pause")
		t.Fatal(err)
	}
	if got := texts(t, ctx, `[data-testid=gitops-autosync]`); len(got) != 1 || !strings.Contains(got[0], "e2e: release freeze") {
		t.Errorf("auto-sync after the pause = %q, want the reason shown", got)
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		screenshot(t, ctx, "paused-"+size.name)
	}
	emulateScreen(t, ctx, screenSizes()[0])
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=autosync-resume]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=autosync-pause]`)),
	); err != nil {
		screenshot(t, ctx, "no-resume")
		t.Fatal(err)
	}
}
