package deploy_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/audit"
)

// auditWithToken runs the audit trail as serve runs it, with the service
// account's token: the index (a metadata watch), appends (record, stream
// head update, Event) and a retention pass under the Lease that trims to
// one record. No step may be forbidden; the store's warnings (a record
// stored without its Event, a stream head not advanced, a failed
// retention pass) go to log, which the caller checks.
func auditWithToken(ctx context.Context, t *testing.T, cfg *rest.Config, log *slog.Logger) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	// The key as serve reads it, from the file the kubelet mounts: the
	// service account has no right on Secrets.
	store, err := audit.New(cs.CoreV1(), metadata.NewForConfigOrDie(cfg), audit.Options{Namespace: ownNS, Log: log,
		Key: []byte("the mounted deploy-web-audit-key, 32 bytes or more")})
	if err != nil {
		t.Fatal(err)
	}
	ictx, stop := context.WithCancel(ctx)
	defer stop()
	if err := store.Start(ictx); err != nil {
		t.Fatalf("service account: audit index: %v", err)
	}
	// A refused record, then two writes: the refusal is kept apart (its
	// own stream), the writes' stream is trimmed to the newest.
	for _, outcome := range []audit.Outcome{audit.OutcomeRefused, audit.OutcomeSucceeded, audit.OutcomeSucceeded} {
		if _, err := store.Append(ctx, audit.Record{Actor: audit.Actor{Email: "alice@example.com"}, Verb: audit.VerbApply,
			Cluster: "home", Environment: environment, Outcome: outcome}); err != nil {
			t.Fatalf("service account: append an audit record: %v", err)
		}
	}
	ret, err := audit.NewRetainer(store, cs.CoordinationV1(), audit.RetainerOptions{Identity: "replica-a",
		Retention: audit.Retention{Default: audit.Policy{Keep: 1}}, Interval: 200 * time.Millisecond,
		LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ret.Run(ictx) }()
	waitFor(ctx, t, "retention trims the writes to one, keeping the refusal apart", func() bool {
		p, err := store.List(ctx, audit.Filter{Environment: environment})
		if err != nil || len(p.Records) != 2 {
			return false
		}
		seen := map[audit.Outcome]int{}
		for _, r := range p.Records {
			if !r.Chain.OK {
				return false
			}
			seen[r.Outcome]++
		}
		return seen[audit.OutcomeSucceeded] == 1 && seen[audit.OutcomeRefused] == 1
	})
}
