package handlers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/why"
)

// TestWhySoakPromotableAt: the console's "why" of staging's api names
// dev's newer 1.5.0 waiting for its soak with the time the promotion
// dialog's soak gate gives (the same evaluation); once the soak is over,
// no promotion reason is left.
func TestWhySoakPromotableAt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deployed time.Time
		want     string // in the promotion reason; "" for none
		until    time.Time
	}{
		{"too young", testNow.Add(-time.Minute), "1.5.0 in dev waits for its soak before it may be promoted to staging: 1.5.0 has run in dev for 1m0s of the 10m0s soak: promotable at 12:09:00 UTC",
			testNow.Add(9 * time.Minute)},
		{"soaked", testNow.Add(-time.Hour), "", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := promoteServer(t, promoteRows(tc.deployed, objrules.HealthHealthy))
			id := auth.Identity{Subject: "dee", Email: "dee@example.com", Groups: auth.NewGroupList([]string{"deployers"}), Expires: testNow.Add(time.Hour)}
			ctx := auth.NewContext(context.Background(), id, "")
			ans := f.ts.srv.why.Explain(ctx, why.App{Cluster: "in-cluster", Namespace: "staging-ns", Name: "api", Env: "staging"}, nil, false)
			var got []why.Reason
			for _, r := range ans.Reasons {
				if r.Kind == why.Promotion {
					got = append(got, r)
				}
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("promotion reasons = %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].Message, tc.want) || got[0].Until == nil || !got[0].Until.Equal(tc.until) {
				t.Fatalf("promotion reasons = %+v (errors %v), want one saying %q until %v", got, ans.Errors, tc.want, tc.until)
			}
		})
	}
}
