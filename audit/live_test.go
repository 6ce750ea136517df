package audit

import (
	"context"
	"testing"
	"time"
)

// fakeLister answers pages of recs (newest first) as List would, for
// the filter's environment, verb and outcome, pageSize at a time.
type fakeLister struct {
	recs     []Record
	pageSize int
}

func (f fakeLister) List(_ context.Context, flt Filter) (Page, error) {
	var match []Record
	for _, r := range f.recs {
		if r.Environment == flt.Environment && r.Verb == flt.Verb && r.Outcome == flt.Outcome {
			match = append(match, r)
		}
	}
	start := 0
	if flt.Continue != "" {
		start = int(flt.Continue[0] - '0')
	}
	end := min(start+f.pageSize, len(match))
	p := Page{Records: match[start:end]}
	if end < len(match) {
		p.Continue = string(rune('0' + end))
	}
	return p, nil
}

func TestLastApplied(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rec := func(min int, who string, verb Verb, outcome Outcome, commit string) Record {
		return Record{Time: t0.Add(time.Duration(min) * time.Minute), Actor: Actor{Subject: who}, Verb: verb, Outcome: outcome, Environment: "dev", Commit: commit}
	}
	tests := []struct {
		name       string
		recs       []Record
		wantCommit string
		wantOK     bool
	}{
		{"none", nil, "", false},
		{"a command-line apply counts as any other", []Record{rec(9, "local:alice", VerbApply, OutcomeSucceeded, "cli"), rec(5, "console", VerbApply, OutcomeSucceeded, "old")}, "cli", true},
		{"refused and failed applies do not", []Record{rec(9, "x", VerbApply, OutcomeRefused, "r"), rec(8, "x", VerbApply, OutcomeFailed, "f"), rec(5, "y", VerbApply, OutcomeSucceeded, "ok")}, "ok", true},
		{"other verbs do not", []Record{rec(9, "auto-sync", VerbSelfHeal, OutcomeSucceeded, "h"), rec(5, "y", VerbApply, OutcomeSucceeded, "ok")}, "ok", true},
		{"an apply without a commit is passed over, across pages", []Record{rec(9, "x", VerbApply, OutcomeSucceeded, ""), rec(8, "x", VerbApply, OutcomeSucceeded, ""), rec(5, "y", VerbApply, OutcomeSucceeded, "paged")}, "paged", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := LastApplied(context.Background(), fakeLister{recs: tt.recs, pageSize: 1}, "dev")
			if err != nil || ok != tt.wantOK || got.Commit != tt.wantCommit {
				t.Errorf("LastApplied = %q, %v, %v, want %q, %v", got.Commit, ok, err, tt.wantCommit, tt.wantOK)
			}
		})
	}
}
