package planstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

func TestSaveListGetPrune(t *testing.T) {
	cs := fake.NewClientset()
	s := New(cs.CoreV1(), "deploy-web", 3)
	base := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	ctx := context.Background()
	var saved []Entry
	for i := range 5 {
		e, err := s.Save(ctx, Entry{Environment: "dev", Action: "plan", Conclusion: "ready", Summary: fmt.Sprint("plan ", i), User: "admin@demo.local", Time: base.Add(time.Duration(i) * time.Minute)},
			map[string][]byte{"report.json": []byte(fmt.Sprintf(`{"deployApply":{"n":%d}}`, i)), "diffs.json": []byte(`[]`)})
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, e)
	}
	if _, err := s.Save(ctx, Entry{Environment: "prod", Action: "plan", Conclusion: "blocked", Time: base}, map[string][]byte{"report.json": []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("List(dev) = %d entries, want the newest 3", len(got))
	}
	for i, e := range got {
		if want := saved[4-i]; e.ID != want.ID || e.Summary != want.Summary || e.User != want.User || !e.Time.Equal(want.Time) {
			t.Errorf("List(dev)[%d] = %+v, want %+v", i, e, want)
		}
	}
	if prod, _ := s.List(ctx, "prod"); len(prod) != 1 {
		t.Errorf("List(prod) = %d entries, want 1 (pruning is per environment)", len(prod))
	}
	e, files, err := s.Get(ctx, got[0].ID)
	if err != nil || string(files["report.json"]) != `{"deployApply":{"n":4}}` || string(files["diffs.json"]) != `[]` || e.Conclusion != "ready" {
		t.Errorf("Get(newest) = %+v, %q, %v; want plan 4 with its diffs", e, files, err)
	}
	if _, _, err := s.Get(ctx, saved[0].ID); err != ErrNotFound {
		t.Errorf("Get(pruned) error = %v, want ErrNotFound", err)
	}
	// A fresh store (a restarted dashboard) sees the same history.
	if again, _ := New(cs.CoreV1(), "deploy-web", 3).List(ctx, "dev"); len(again) != 3 || again[0].ID != got[0].ID {
		t.Errorf("a new store lists %v, want the same history", again)
	}
	if _, err := s.Save(ctx, Entry{Environment: "bad env!"}, nil); err == nil {
		t.Error("Save with an invalid environment name = nil error")
	}
}
