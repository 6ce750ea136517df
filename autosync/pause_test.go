package autosync

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

const testNS = "deploy-web"

// settableClock is a clock a test moves by hand; its After never fires,
// so the loop checks only when woken.
type settableClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(t time.Time) *settableClock { return &settableClock{now: t} }

func (c *settableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *settableClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *settableClock) After(time.Duration) <-chan time.Time { return nil }

func TestPauseValidate(t *testing.T) {
	ok := Pause{Env: "dev", Reason: "db migration", Until: t0.Add(time.Hour), By: "ada@example.com"}
	with := func(f func(*Pause)) Pause {
		p := ok
		f(&p)
		return p
	}
	tests := []struct {
		name    string
		p       Pause
		wantErr string
	}{
		{"valid", ok, ""},
		{"exactly seven days", with(func(p *Pause) { p.Until = t0.Add(MaxPause) }), ""},
		{"no reason", with(func(p *Pause) { p.Reason = "  " }), "reason is empty"},
		{"a second line smuggled in the reason", with(func(p *Pause) { p.Reason = "ok\nresumed by admin" }), "one line"},
		{"a bidi override in the reason", with(func(p *Pause) { p.Reason = "ok \u202egnp.exe" }), "one line"},
		{"invalid UTF-8 in the reason", with(func(p *Pause) { p.Reason = "ok \xff" }), "one line"},
		{"a reason over the cap", with(func(p *Pause) { p.Reason = strings.Repeat("a", MaxReasonBytes+1) }), "at most 200"},
		{"no end", with(func(p *Pause) { p.Until = time.Time{} }), "required"},
		{"an end in the past", with(func(p *Pause) { p.Until = t0.Add(-time.Second) }), "not in the future"},
		{"more than seven days", with(func(p *Pause) { p.Until = t0.Add(MaxPause + time.Second) }), "at most 7 days"},
		{"nobody", with(func(p *Pause) { p.By = "" }), "must be named"},
		{"no environment", with(func(p *Pause) { p.Env = "" }), "environment is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.validate(t0)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestPausesPauseResumeLapse(t *testing.T) {
	ctx := context.Background()
	clock := newClock(t0)
	s := NewPauses(fake.NewClientset().CoreV1(), testNS, signtest.Keys(), clock.Now)
	if ps, err := s.List(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("List() on no ConfigMap = %v, %v; want none, nil", ps, err)
	}
	if _, err := s.Pause(ctx, "dev", "release freeze", t0.Add(8*24*time.Hour), "ada"); err == nil {
		t.Fatal("Pause for 8 days succeeded, want a refusal")
	}
	p, err := s.Pause(ctx, "dev", "db migration", t0.Add(time.Hour), "ada")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pause(ctx, "qa", "flaky tests", t0.Add(2*time.Hour), "bob"); err != nil {
		t.Fatal(err)
	}
	ps, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := activePause(ps, "dev", t0); !ok || got != p {
		t.Errorf("activePause(dev) = %+v, %v; want %+v, true", got, ok, p)
	}
	// A second pause replaces the first: one entry per environment.
	if _, err := s.Pause(ctx, "dev", "longer migration", t0.Add(3*time.Hour), "ada"); err != nil {
		t.Fatal(err)
	}
	if ps, _ = s.List(ctx); len(ps) != 2 {
		t.Errorf("List() after a second pause of dev has %d entries, want 2", len(ps))
	}

	if _, err := s.Resume(ctx, "dev", ""); err == nil {
		t.Error("Resume by nobody succeeded, want a refusal")
	}
	clock.Set(t0.Add(time.Minute))
	r, err := s.Resume(ctx, "dev", "carol")
	if err != nil {
		t.Fatal(err)
	}
	if r.ResumedBy != "carol" || !r.ResumedAt.Equal(t0.Add(time.Minute)) || r.Reason != "longer migration" {
		t.Errorf("Resume() = %+v, want the longer migration resumed by carol at t0+1m", r)
	}
	ps, _ = s.List(ctx)
	if _, ok := activePause(ps, "dev", clock.Now()); ok {
		t.Error("dev still paused after Resume")
	}
	if _, err := s.Resume(ctx, "dev", "carol"); !errors.Is(err, ErrNotPaused) {
		t.Errorf("Resume() twice = %v, want ErrNotPaused", err)
	}

	// qa's pause lapses by itself: no write.
	if _, ok := activePause(ps, "qa", t0.Add(2*time.Hour-time.Second)); !ok {
		t.Error("qa not paused a second before its end")
	}
	if _, ok := activePause(ps, "qa", t0.Add(2*time.Hour)); ok {
		t.Error("qa still paused at its end")
	}
	clock.Set(t0.Add(2 * time.Hour))
	if _, err := s.Resume(ctx, "qa", "carol"); !errors.Is(err, ErrNotPaused) {
		t.Errorf("Resume() of a lapsed pause = %v, want ErrNotPaused", err)
	}
}

// TestPausesHandEditFailsClosed: pauses edited through the API as a
// person would (kubectl edit: the pause's end moved into the past, to
// resume auto-sync without a record) read as tampered, and no pause or
// resume is written on top of them; so do pauses without a signature
// (a deploy-web from before signed state); an unknown field, signed, is
// named.
func TestPausesHandEditFailsClosed(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	s := NewPauses(cs.CoreV1(), testNS, signtest.Keys(), func() time.Time { return t0 })
	if _, err := s.Pause(ctx, "dev", "incident", t0.Add(time.Hour), "alice"); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(testNS).Get(ctx, PausesConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	until := t0.Add(time.Hour).UTC().Format(time.RFC3339)
	if !strings.Contains(cm.Data[PausesKey], until) {
		t.Fatalf("stored pauses %s do not hold %s", cm.Data[PausesKey], until)
	}
	cm.Data[PausesKey] = strings.Replace(cm.Data[PausesKey], until, t0.Add(-time.Hour).UTC().Format(time.RFC3339), 1)
	if _, err := cs.CoreV1().ConfigMaps(testNS).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx); !errors.As(err, new(*cmstore.TamperedError)) {
		t.Errorf("List() of a hand edit = %v, want a *cmstore.TamperedError (the loop then acts on no environment)", err)
	}
	if _, err := s.Resume(ctx, "dev", "bob"); !errors.As(err, new(*cmstore.TamperedError)) {
		t.Errorf("Resume() over a hand edit = %v, want a *cmstore.TamperedError", err)
	}

	unsigned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: PausesConfigMap, Namespace: testNS},
		Data: map[string]string{PausesKey: `{"pauses":[]}`}}
	s = NewPauses(fake.NewClientset(unsigned).CoreV1(), testNS, signtest.Keys(), func() time.Time { return t0 })
	if _, err := s.List(ctx); !errors.As(err, new(*cmstore.TamperedError)) || !strings.Contains(err.Error(), "no signature") {
		t.Errorf("List() of unsigned pauses = %v, want a *cmstore.TamperedError saying there is no signature", err)
	}
	if _, err := s.Pause(ctx, "qa", "x", t0.Add(time.Hour), "a"); err == nil {
		t.Error("Pause over unsigned pauses succeeded, want an error (no silent overwrite)")
	}
}

// TestPausesCleanText: a pause's reason and author are stored without
// format characters (a bidi override); a line break is still refused.
func TestPausesCleanText(t *testing.T) {
	ctx := context.Background()
	s := NewPauses(fake.NewClientset().CoreV1(), testNS, signtest.Keys(), newClock(t0).Now)
	if _, err := s.Pause(ctx, "dev", "db \u202enoitargim\u202c", t0.Add(time.Hour), "a\u200bda"); err != nil {
		t.Fatal(err)
	}
	ps, err := s.List(ctx)
	if err != nil || len(ps) != 1 || ps[0].Reason != "db noitargim" || ps[0].By != "ada" {
		t.Fatalf("List() = %+v, %v; want one pause, its reason and author without format characters", ps, err)
	}
	if _, err := s.Pause(ctx, "dev", "two\nlines", t0.Add(time.Hour), "ada"); err == nil {
		t.Error("Pause(reason with a line break) = nil error, want a refusal")
	}
}

// TestPauseErrorPublic: validate's refusal is a *PauseError whose public
// text names the field without the package's prefix.
func TestPauseErrorPublic(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	err := Pause{Env: "dev", Reason: " ", By: "ada", Until: now.Add(time.Hour)}.validate(now)
	var pe *PauseError
	if !errors.As(err, &pe) {
		t.Fatalf("validate(empty reason) = %v, want a *PauseError", err)
	}
	if got := pe.Public(); !strings.Contains(got, "the reason is empty") || strings.Contains(got, "autosync:") {
		t.Errorf("Public() = %q, want the reason named without the package prefix", got)
	}
}
