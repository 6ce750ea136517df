package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
)

// TestCLIWritesOneRecordEach: on a real control plane, every CLI apply
// and restore writes exactly one record to deploy-web's namespace of the
// environment's cluster, refused ones included, naming the kubeconfig's
// user; a plan writes none; another --audit-namespace than the
// environment's is refused without --break-glass; with it, an empty one
// writes none and says so, and a namespace the record cannot be written
// to is a warning, not a failed apply.
func TestCLIWritesOneRecordEach(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs the local control plane")
	}
	s, store := newAuditedSample(t)
	ctx := context.Background()
	base := []string{"--config", s.cfgPath, "--env", "sample-dev"}
	confirmed := []string{"--confirm-env=sample-dev", "--confirmed-non-production", "--timeout", "2m"}
	stored := func() []audit.Record {
		t.Helper()
		p, err := store.List(ctx, audit.Filter{Environment: "sample-dev"})
		if err != nil {
			t.Fatal(err)
		}
		return p.Records
	}
	steps := []struct {
		name     string
		args     []string
		code     int
		verb     audit.Verb
		outcome  audit.Outcome
		stderr   string
		recorded bool
	}{
		{"a plan", append([]string{"apply", "--dry-run"}, base...), 0, "", "", "", false},
		{"an apply without its confirmation", append([]string{"apply", "--apply", "--confirm-env=sample-dev"}, base...), exitRefused,
			audit.VerbApply, audit.OutcomeRefused, "audit record", true},
		{"an apply", append(append([]string{"apply", "--apply"}, confirmed...), base...), 0, audit.VerbApply, audit.OutcomeSucceeded, "audit record", true},
		{"a restore of a capture that does not exist", append(append([]string{"restore", "--capture", filepath.Join(s.dir, "no-such-capture")}, confirmed...), base...), exitRefused,
			audit.VerbRestore, audit.OutcomeRefused, "audit record", true},
		{"an apply with records elsewhere, no break-glass", append(append([]string{"apply", "--apply", "--audit-namespace="}, confirmed...), base...), exitRefused, "", "", `--audit-namespace "" is not deploy-web's namespace`, false},
		{"an apply with records turned off", append(append([]string{"apply", "--apply", "--audit-namespace=", "--break-glass", "no records"}, confirmed...), base...), 0, "", "", "no audit record written", false},
		{"an apply whose record cannot be written", append(append([]string{"apply", "--apply", "--audit-namespace=no-such-namespace", "--break-glass", "records elsewhere"}, confirmed...), base...), 0, "", "", "warning: the audit record was not written to namespace no-such-namespace", false},
	}
	n := 0
	for i, st := range steps {
		// Reports (and captures) into the test's folder, not the package's.
		args := append(st.args, "--write-report", filepath.Join(s.reports, fmt.Sprintf("step-%d.json", i)))
		code, _, stderr := s.cli(args...)
		if code != st.code {
			t.Fatalf("%s: exit %d, want %d", st.name, code, st.code)
		}
		if !strings.Contains(stderr, st.stderr) {
			t.Errorf("%s: stderr lacks %q", st.name, st.stderr)
		}
		recs := stored()
		if st.recorded {
			n++
		}
		if len(recs) != n {
			t.Fatalf("%s: %d records, want %d", st.name, len(recs), n)
		}
		if !st.recorded {
			continue
		}
		got := recs[0]
		if got.Verb != st.verb || got.Outcome != st.outcome || got.Cluster != "devcluster" || got.Actor.Subject == "" || strings.HasPrefix(got.Actor.Subject, "local:") || !got.Chain.OK {
			t.Errorf("%s: record = %s %s in %s by %+v (chain %+v), want %s %s in devcluster by the kubeconfig's user", st.name, got.Verb, got.Outcome, got.Cluster, got.Actor, got.Chain, st.verb, st.outcome)
		}
		if st.outcome != audit.OutcomeSucceeded {
			continue
		}
		full, err := store.Get(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		secrets := 0
		for _, m := range full.Manifests {
			if m.GetKind() == "Secret" {
				secrets++
				if m.Object["data"] != nil || m.Object["stringData"] != nil || m.GetAnnotations()[deployplan.SecretHashAnnotation] == "" {
					t.Errorf("%s: the record keeps Secret %s as %v, want its name and hash only", st.name, m.GetName(), m.Object)
				}
			}
		}
		if len(full.Manifests) == 0 || secrets == 0 || got.Commit == "" || got.RenderedDigest == "" {
			t.Errorf("%s: record with %d manifests (%d Secrets), commit %q, digest %q; want the applied manifests, the Secret among them, and the commit and digest",
				st.name, len(full.Manifests), secrets, got.Commit, got.RenderedDigest)
		}
	}
}
