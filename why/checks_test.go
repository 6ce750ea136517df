package why

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/promotion"
)

// fakeChecks answers the checks gate of App web into staging.
type fakeChecks struct {
	g     *CheckGate
	err   error
	asked *int
}

func (f fakeChecks) Pending(_ context.Context, env, app string) (*CheckGate, error) {
	*f.asked++
	if env != "staging" || app != "web" {
		return nil, nil
	}
	return f.g, f.err
}

// TestExplainCheckReasons: a version waiting in dev that its promotion
// checks refuse is a promotion reason naming the failing check, its value
// and threshold (the gate's own words) and linking the dialog; a gate
// that passed gives none; a source that fails is named in Errors; the
// checks are asked in detail only, and not at all WithoutChecks.
func TestExplainCheckReasons(t *testing.T) {
	failed := promotion.Gate{ID: promotion.GateChecks, State: promotion.Failed,
		Message: `check error-rate failed: 0.08 at 11:59:00 UTC breaks the threshold <= 0.05 (query max(x{app="web"}))`}
	passed := promotion.Gate{ID: promotion.GateChecks, State: promotion.Passed, Message: "check error-rate held"}
	for _, tt := range []struct {
		name      string
		g         *CheckGate
		err       error
		detail    Detail
		without   bool
		want      string
		wantErr   bool
		wantAsked int
	}{
		{name: "failing check", g: &CheckGate{Source: "dev", Version: "1.5.0", Gate: failed}, detail: true, wantAsked: 1,
			want: `1.5.0 of dev is not promoted to staging: its promotion checks refuse it: check error-rate failed: 0.08 at 11:59:00 UTC breaks the threshold <= 0.05 (query max(x{app="web"}))`},
		{name: "unreachable", g: &CheckGate{Source: "dev", Version: "1.5.0", Gate: promotion.Gate{State: promotion.Failed,
			Message: "check error-rate could not be evaluated (query q; threshold <= 0.05): Prometheus at http://127.0.0.1:1 is unreachable"}}, detail: true, wantAsked: 1,
			want: "1.5.0 of dev is not promoted to staging: its promotion checks refuse it: check error-rate could not be evaluated (query q; threshold <= 0.05): Prometheus at http://127.0.0.1:1 is unreachable"},
		{name: "held", g: &CheckGate{Source: "dev", Version: "1.5.0", Gate: passed}, detail: true, wantAsked: 1},
		{name: "nothing waits", detail: true, wantAsked: 1},
		{name: "unreadable", err: errors.New("boom"), detail: true, wantErr: true, wantAsked: 1},
		{name: "not in detail", g: &CheckGate{Source: "dev", Version: "1.5.0", Gate: failed}, detail: false, wantAsked: 0},
		{name: "without checks", g: &CheckGate{Source: "dev", Version: "1.5.0", Gate: failed}, detail: true, without: true, wantAsked: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asked := 0
			s := New(Options{Checks: fakeChecks{g: tt.g, err: tt.err, asked: &asked}})
			if tt.without {
				s = s.WithoutChecks()
			}
			ans := s.Explain(context.Background(), app(), fakeCluster{}, tt.detail)
			var got []Reason
			for _, r := range ans.Reasons {
				if r.Kind == Promotion {
					got = append(got, r)
				}
			}
			switch {
			case tt.want == "" && len(got) != 0:
				t.Errorf("Explain() promotion reasons = %+v, want none", got)
			case tt.want != "" && (len(got) != 1 || got[0].Message != tt.want || got[0].Link != "/environments/staging/promote?app=web&from=dev"):
				t.Errorf("Explain() promotion reasons = %+v, want one: %q linking the dialog", got, tt.want)
			}
			if hasErr := len(ans.Errors) == 1 && strings.Contains(ans.Errors[0], "promotion checks"); hasErr != tt.wantErr {
				t.Errorf("Explain() errors = %v, want the promotion checks named: %v", ans.Errors, tt.wantErr)
			}
			if asked != tt.wantAsked {
				t.Errorf("the checks were asked %d times, want %d", asked, tt.wantAsked)
			}
		})
	}
}
