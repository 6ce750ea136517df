package demo

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign"
)

// The demo's scheduled freeze: prod is frozen every night from
// FreezeNightlyHour UTC for FreezeNightlyLength, for the demo's month.
const (
	FreezeNightlyHour   = 22
	FreezeNightlyLength = 8 * time.Hour
	freezeSeries        = 30 * 24 * time.Hour
	freezeLeadTime      = 3 * time.Hour
	freezeReason        = "nightly change freeze: prod changes only in office hours"
	freezeTicket        = "https://tickets.example.com/CHG-1001"
)

// nightlyFreeze is the demo's freeze of prod, every night at
// FreezeNightlyHour, from the day of now (UTC midnight), or from the next
// day when tonight's freeze starts within freezeLeadTime: a demo (and its
// browser tests) never starts inside a freeze or just before one, so
// prod's promotions behave the same whatever the time of day.
func nightlyFreeze(now time.Time) freeze.Freeze {
	day := now.UTC().Truncate(24 * time.Hour)
	if tonight := day.Add(FreezeNightlyHour * time.Hour); now.After(tonight.Add(-freezeLeadTime)) {
		day = day.Add(24 * time.Hour)
	}
	return freeze.Freeze{
		Scope:    scope.Scope{Environments: []string{ProdEnvironment}},
		Start:    day,
		End:      day.Add(freezeSeries),
		RRule:    fmt.Sprintf("FREQ=DAILY;BYHOUR=%d;BYMINUTE=0", FreezeNightlyHour),
		Duration: freeze.Duration(FreezeNightlyLength),
		Reason:   freezeReason,
		Ticket:   freezeTicket,
		Author:   freeze.Author{Email: "admin@example.com", Subject: "deploy-web demo"},
	}
}

// seedFreeze stores the nightly freeze in the console's freezes ConfigMap
// (the history namespace, deploy-web's own in the demo).
func seedFreeze(ctx context.Context, cs kubernetes.Interface, now time.Time) (freeze.Freeze, error) {
	// Signed with the audit records' key, the Secret the console reads
	// (created here first when the demo seeds before the console starts).
	keys := sign.SecretKeys{Secrets: cs.CoreV1(), Namespace: HistoryNamespace}
	f, err := freeze.NewStore(cs.CoreV1(), HistoryNamespace, keys).Add(ctx, nightlyFreeze(now))
	if err != nil {
		return f, fmt.Errorf("demo: seed the nightly freeze of %s: %w", ProdEnvironment, err)
	}
	return f, nil
}
