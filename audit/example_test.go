package audit_test

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/audit"
)

// apply stands for a verb's own work.
func apply(context.Context) ([]*unstructured.Unstructured, error) { return nil, nil }

// Wiring a verb is one call after the action, refused and failed attempts
// included.
func ExampleStore_Append() {
	var store *audit.Store // audit.New at start-up, then Start
	ctx, start := context.Background(), time.Now()
	applied, err := apply(ctx)
	outcome, msg := audit.OutcomeSucceeded, ""
	if err != nil {
		// OutcomeRefused when a gate stopped it before any write.
		outcome, msg = audit.OutcomeFailed, "the apply stopped: see its report"
	}
	if _, err := store.Append(ctx, audit.Record{
		Time: start, Duration: audit.Duration(time.Since(start)),
		Actor: audit.Actor{Email: "alice@example.com", Subject: "u-1", Groups: []string{"platform"}},
		Verb:  audit.VerbApply, Cluster: "eu-1", Environment: "staging",
		Commit: "0123abc", RenderedDigest: "sha256:...",
		Outcome: outcome, Message: msg,
		Manifests: applied,
	}); err != nil {
		// Append has logged the record at error level: it is not lost.
		slog.Error("audit record not stored", "err", err)
	}
}
