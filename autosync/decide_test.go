package autosync

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func TestDecide(t *testing.T) {
	on := Environment{Name: "dev", Enabled: true, Interval: time.Minute, Grace: 2 * time.Minute}
	heal := on
	heal.SelfHeal = true
	protected := heal
	protected.Protected = true
	off := Environment{Name: "dev", Interval: time.Minute, Grace: 2 * time.Minute}
	drift := func(ago time.Duration, ref string) []DriftedObject {
		return []DriftedObject{{Ref: ref, Since: t0.Add(-ago)}}
	}
	tests := []struct {
		name string
		env  Environment
		st   envState
		in   inputs
		want action
	}{
		{"head moved: deploy the head", on, envState{}, inputs{head: "b", live: "a"},
			action{kind: actDeploy, commit: "b", why: "head moved"}},
		{"never applied: deploy the head", on, envState{}, inputs{head: "a"},
			action{kind: actDeploy, commit: "a", why: "head moved"}},
		{"in sync: wait an interval", on, envState{}, inputs{head: "a", live: "a"},
			action{kind: actWait, next: t0.Add(time.Minute), why: "in sync"}},
		{"same head after blocked: wait", on, envState{blockedHead: "b"}, inputs{head: "b", live: "a"},
			action{kind: actWait, next: t0.Add(time.Minute), why: "head blocked: waiting for a new commit or a person"}},
		{"same head after blocked, applied by a person since: deploy", on, envState{blockedHead: "b", blockedAt: t0.Add(-time.Hour)}, inputs{head: "b", live: "a", actedAt: t0.Add(-time.Minute)},
			action{kind: actDeploy, commit: "b", actedAt: t0.Add(-time.Minute), why: "a person acted since the head was blocked"}},
		{"same head after blocked, last applied before the block: wait", on, envState{blockedHead: "b", blockedAt: t0.Add(-time.Minute)}, inputs{head: "b", live: "a", actedAt: t0.Add(-time.Hour)},
			action{kind: actWait, next: t0.Add(time.Minute), why: "head blocked: waiting for a new commit or a person"}},
		{"head moved past the blocked one: deploy", on, envState{blockedHead: "b"}, inputs{head: "c", live: "a"},
			action{kind: actDeploy, commit: "c", why: "head moved"}},
		{"paused: skip", heal, envState{}, inputs{paused: true, head: "b", live: "a", drifted: drift(time.Hour, "x")},
			action{kind: actWait, next: t0.Add(time.Minute), why: "paused"}},
		{"protected: never", protected, envState{}, inputs{head: "b", live: "a", drifted: drift(time.Hour, "x")},
			action{kind: actNever, why: "protected"}},
		{"auto-sync off: never", off, envState{}, inputs{head: "b", live: "a"},
			action{kind: actNever, why: "auto-sync off"}},
		{"drift below grace: wait until it is due", heal, envState{}, inputs{head: "a", live: "a", drifted: drift(90*time.Second, "x")},
			action{kind: actWait, next: t0.Add(30 * time.Second), why: "drift within grace"}},
		{"drift past grace: heal at the live commit", heal, envState{}, inputs{head: "a", live: "a", drifted: append(drift(2*time.Minute, "x"), drift(time.Second, "y")...)},
			action{kind: actHeal, commit: "a", objects: []string{"x"}, why: "drift past grace"}},
		{"drift past grace, healed within the window: wait", heal, envState{lastHeal: t0.Add(-time.Minute)}, inputs{head: "a", live: "a", drifted: drift(time.Hour, "x")},
			action{kind: actWait, next: t0.Add(time.Minute), why: "healed within the grace window"}},
		{"drift past grace, window over: heal again", heal, envState{lastHeal: t0.Add(-2 * time.Minute)}, inputs{head: "a", live: "a", drifted: drift(time.Hour, "x")},
			action{kind: actHeal, commit: "a", objects: []string{"x"}, why: "drift past grace"}},
		{"drift past grace without self-heal: wait", on, envState{}, inputs{head: "a", live: "a", drifted: drift(time.Hour, "x")},
			action{kind: actWait, next: t0.Add(time.Minute), why: "in sync"}},
		{"drift while the head is blocked: heal the live commit", heal, envState{blockedHead: "b"}, inputs{head: "b", live: "a", drifted: drift(time.Hour, "x")},
			action{kind: actHeal, commit: "a", objects: []string{"x"}, why: "drift past grace"}},
		{"drift, never applied: nothing to heal to", heal, envState{blockedHead: "b"}, inputs{head: "b", drifted: drift(time.Hour, "x")},
			action{kind: actWait, next: t0.Add(time.Minute), why: "head blocked: waiting for a new commit or a person"}},
		{"first error: back off one interval", on, envState{}, inputs{err: errors.New("git down")},
			action{kind: actFail, next: t0.Add(time.Minute), why: "check failed"}},
		{"third error in a row: back off four intervals", on, envState{failures: 2}, inputs{err: errors.New("git down")},
			action{kind: actFail, next: t0.Add(4 * time.Minute), why: "check failed"}},
		{"tenth error in a row: capped at eight intervals", on, envState{failures: 9}, inputs{err: errors.New("git down")},
			action{kind: actFail, next: t0.Add(8 * time.Minute), why: "check failed"}},
		{"backing off: wait even if the head moved", on, envState{failures: 1, retryAt: t0.Add(time.Second)}, inputs{head: "b", live: "a"},
			action{kind: actWait, next: t0.Add(time.Second), why: "backing off after errors"}},
		{"backoff over: deploy", on, envState{failures: 1, retryAt: t0}, inputs{head: "b", live: "a"},
			action{kind: actDeploy, commit: "b", why: "head moved"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decide(tt.env, tt.st, tt.in, t0)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(action{})); diff != "" {
				t.Errorf("decide() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSettle(t *testing.T) {
	e := Environment{Name: "dev", Enabled: true, SelfHeal: true, Interval: time.Minute, Grace: 2 * time.Minute}
	deploy := action{kind: actDeploy, commit: "b"}
	heal := action{kind: actHeal, commit: "a"}
	tests := []struct {
		name string
		st   envState
		a    action
		res  Result
		err  error
		want envState
	}{
		{"blocked auto-sync: remember the head", envState{failures: 2, retryAt: t0}, deploy, Result{Outcome: OutcomeBlocked}, nil,
			envState{blockedHead: "b", blockedAt: t0}},
		{"blocked again after a person's apply stamped ahead of this clock: that apply is not after the block", envState{blockedHead: "b"}, action{kind: actDeploy, commit: "b", actedAt: t0.Add(time.Minute)}, Result{Outcome: OutcomeBlocked}, nil,
			envState{blockedHead: "b", blockedAt: t0.Add(time.Minute)}},
		{"applied auto-sync: forget the blocked head", envState{blockedHead: "x", blockedAt: t0}, deploy, Result{Outcome: OutcomeApplied}, nil,
			envState{}},
		{"failed apply: back off", envState{}, deploy, Result{Outcome: OutcomeFailed}, nil,
			envState{failures: 1, retryAt: t0.Add(time.Minute)}},
		{"refused (lock held): back off more", envState{failures: 1}, deploy, Result{Outcome: OutcomeRefused}, nil,
			envState{failures: 2, retryAt: t0.Add(2 * time.Minute)}},
		{"refused by a freeze: ask again when it opens, the failures forgotten", envState{failures: 3}, deploy, Result{}, &freeze.FrozenError{OpensAt: t0.Add(3 * time.Minute)},
			envState{retryAt: t0.Add(3 * time.Minute)}},
		{"refused by a long freeze: ask again after the longest back-off (it may end early)", envState{}, deploy, Result{}, fmt.Errorf("envrun: %w", &freeze.FrozenError{OpensAt: t0.Add(240 * time.Hour)}),
			envState{retryAt: t0.Add(maxBackoffFactor * time.Minute)}},
		{"deploy error: back off", envState{}, deploy, Result{}, errors.New("boom"),
			envState{failures: 1, retryAt: t0.Add(time.Minute)}},
		{"heal applied while a head is blocked: the window starts; the heal's apply is not a person acting", envState{blockedHead: "b", blockedAt: t0.Add(-time.Hour)}, heal, Result{Outcome: OutcomeApplied}, nil,
			envState{blockedHead: "b", blockedAt: t0, lastHeal: t0}},
		{"heal blocked: the window starts, the head is not marked", envState{}, heal, Result{Outcome: OutcomeBlocked}, nil,
			envState{lastHeal: t0}},
		{"heal error: the window starts and it backs off", envState{}, heal, Result{}, errors.New("boom"),
			envState{lastHeal: t0, failures: 1, retryAt: t0.Add(time.Minute)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := settle(e, tt.st, tt.a, tt.res, tt.err, t0)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(envState{})); diff != "" {
				t.Errorf("settle() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{{1, 10 * time.Second}, {2, 20 * time.Second}, {3, 40 * time.Second}, {4, 80 * time.Second}, {5, 80 * time.Second}, {1000, 80 * time.Second}} {
		if got := backoff(10*time.Second, tt.n); got != tt.want {
			t.Errorf("backoff(10s, %d) = %s, want %s", tt.n, got, tt.want)
		}
	}
}

func TestNormalise(t *testing.T) {
	tests := []struct {
		name    string
		envs    []Environment
		want    []Environment
		wantErr string
	}{
		{"defaults", []Environment{{Name: "dev", Enabled: true}},
			[]Environment{{Name: "dev", Enabled: true, Interval: envconfig.DefaultAutoSyncInterval, Grace: envconfig.DefaultSelfHealGrace}}, ""},
		{"protected with auto-sync is refused", []Environment{{Name: "prod", Enabled: true, Protected: true}}, nil, "protected"},
		{"protected with self-heal is refused", []Environment{{Name: "prod", SelfHeal: true, Protected: true}}, nil, "protected"},
		{"protected without auto-sync is kept", []Environment{{Name: "prod", Protected: true}},
			[]Environment{{Name: "prod", Protected: true, Interval: envconfig.DefaultAutoSyncInterval, Grace: envconfig.DefaultSelfHealGrace}}, ""},
		{"interval below 10s", []Environment{{Name: "dev", Enabled: true, Interval: 9 * time.Second}}, nil, "at least 10s"},
		{"negative grace", []Environment{{Name: "dev", Enabled: true, Grace: -time.Second}}, nil, "negative"},
		{"self-heal without auto-sync", []Environment{{Name: "dev", SelfHeal: true}}, nil, "needs autoSync.enabled"},
		{"twice", []Environment{{Name: "dev"}, {Name: "dev"}}, nil, "listed twice"},
		{"no name", []Environment{{Enabled: true}}, nil, "name is empty"},
		{"none", nil, nil, "no environments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := normaliseAll(tt.envs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("normaliseAll() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("normaliseAll() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewRunBounded: what a run keeps for the status is bounded, however
// many and however long the blockers, objects and error a Deployer or a
// drift source returns.
func TestNewRunBounded(t *testing.T) {
	var blockers, objects []string
	for range 1000 {
		blockers = append(blockers, strings.Repeat("b", 10<<10))
		objects = append(objects, "apps/v1 Deployment shop/api")
	}
	r := newRun(action{kind: actHeal, commit: "a", objects: objects}, Result{Outcome: OutcomeBlocked, Blockers: blockers}, nil, t0)
	if len(r.Blockers) != maxBlockers+1 || r.Blockers[maxBlockers] != "(and 980 more)" {
		t.Errorf("newRun() kept %d blockers, last %q; want %d and a count of the rest", len(r.Blockers), r.Blockers[len(r.Blockers)-1], maxBlockers+1)
	}
	for i, b := range r.Blockers {
		if len(b) > maxBlockerBytes+len("…") {
			t.Errorf("newRun() blocker %d has %d bytes, want at most %d", i, len(b), maxBlockerBytes)
		}
	}
	if len(r.Objects) != maxHealObjects+1 || r.Objects[maxHealObjects] != "(and 950 more)" {
		t.Errorf("newRun() kept %d objects, want %d and a count of the rest", len(r.Objects), maxHealObjects+1)
	}
	if r := newRun(action{kind: actDeploy, commit: "a"}, Result{}, &freeze.FrozenError{Action: freeze.AutoSync, OpensAt: t0}, t0); r.Outcome != OutcomeRefused || !strings.Contains(r.Error, "frozen until") {
		t.Errorf("newRun() refused by a freeze = outcome %q, error %q; want refused, the freeze's words", r.Outcome, r.Error)
	}
	r = newRun(action{kind: actDeploy, commit: "a"}, Result{}, errors.New(strings.Repeat("e", 1<<20)), t0)
	if r.Outcome != OutcomeError || len(r.Error) > maxErrorBytes+len("…") || r.Trigger != TriggerAutoSync {
		t.Errorf("newRun() with a 1 MiB error = outcome %q, %d bytes of error, trigger %q; want error, at most %d, auto-sync", r.Outcome, len(r.Error), r.Trigger, maxErrorBytes)
	}
}
