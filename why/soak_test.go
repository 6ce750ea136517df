package why

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/web/paths"
)

type fakeSoaks struct {
	s   []promotion.Soaking
	err error
}

func (f fakeSoaks) Soaking(_ context.Context, target string) ([]promotion.Soaking, error) {
	if target != "staging" {
		return nil, nil
	}
	return f.s, f.err
}

// TestExplainSoak: an App whose newer version in its environment's
// source waits for its soak has a promotion reason with the soak gate's
// message, the promotable time as Until and the promotion dialog's
// link, even while its own version is live; another App's soak is not
// its reason; an unreadable soak is named in Errors.
func TestExplainSoak(t *testing.T) {
	promotable := now.Add(20 * time.Minute)
	soaks := fakeSoaks{s: []promotion.Soaking{
		{App: "web", Version: "1.3.0", Source: "dev", Target: "staging", At: promotable, Message: "1.3.0 has run in dev for 40m0s of the 1h0m0s soak: promotable at 12:20:00 UTC"},
		{App: "api", Version: "2.0.0", Source: "dev", Target: "staging", At: promotable, Message: "other"},
	}}
	ans := New(Options{Soaks: soaks, Applied: fakeApplied{liveEntry}}).Explain(context.Background(), app(), fakeCluster{}, true)
	if len(ans.Reasons) != 1 {
		t.Fatalf("reasons = %+v, want the soak alone", ans.Reasons)
	}
	r := ans.Reasons[0]
	want := "1.3.0 in dev waits for its soak before it may be promoted to staging: 1.3.0 has run in dev for 40m0s of the 1h0m0s soak: promotable at 12:20:00 UTC"
	if r.Kind != Promotion || r.Message != want || r.Until == nil || !r.Until.Equal(promotable) || r.Link != paths.EnvPromote("staging", "dev", "web") {
		t.Errorf("reason = %+v (until %v), want promotion %q until %v linking the dialog", r, r.Until, want, promotable)
	}
	ans = New(Options{Soaks: fakeSoaks{err: errors.New("boom")}}).Explain(context.Background(), app(), fakeCluster{}, true)
	if len(ans.Reasons) != 0 || len(ans.Errors) != 1 {
		t.Errorf("unreadable soak: reasons %+v, errors %v; want none and one error", ans.Reasons, ans.Errors)
	}
}
