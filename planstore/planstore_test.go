package planstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/internal/labels"
)

func TestSaveListGetPrune(t *testing.T) {
	cs := fake.NewClientset()
	s := New(cs.CoreV1(), "deploy-web", 3)
	base := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	ctx := context.Background()
	var saved []Entry
	for i := range 5 {
		e, err := s.Save(ctx, Entry{Environment: "dev", Action: "plan", Conclusion: "ready", Summary: fmt.Sprint("plan ", i), User: "admin@demo.local", Time: base.Add(time.Duration(i) * time.Minute), Commit: fmt.Sprintf("%040d", i)},
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
		if want := saved[4-i]; e.ID != want.ID || e.Summary != want.Summary || e.User != want.User || !e.Time.Equal(want.Time) || e.Commit != want.Commit {
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

func gz(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGetRefusesGzipBombs: a history ConfigMap written by someone else
// whose files decompress past a limit is refused, not read into memory.
func TestGetRefusesGzipBombs(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		data      map[string][]byte
		wantLimit int64 // 0: readable
	}{
		{"one file over the file limit", map[string][]byte{"report.json.gz": gz(t, MaxFileBytes+1)}, MaxFileBytes},
		{"files over the entry limit together", map[string][]byte{"a.gz": gz(t, 12<<20), "b.gz": gz(t, 12<<20), "c.gz": gz(t, 12<<20)}, MaxEntryBytes},
		{"within the limits", map[string][]byte{"report.json.gz": gz(t, MaxFileBytes), "diffs.json.gz": gz(t, 1<<20)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "bomb", Namespace: "deploy-web", Labels: map[string]string{labels.Kind: kindValue, LabelEnvironment: "dev"}},
				BinaryData: tt.data,
			})
			_, files, err := New(cs.CoreV1(), "deploy-web", 3).Get(ctx, "bomb")
			var tl *TooLargeError
			switch {
			case tt.wantLimit == 0 && err != nil:
				t.Fatalf("Get = %v, want the files", err)
			case tt.wantLimit == 0 && len(files) != len(tt.data):
				t.Fatalf("Get = %d files, want %d", len(files), len(tt.data))
			case tt.wantLimit != 0 && (!errors.As(err, &tl) || tl.Limit != tt.wantLimit || tl.ID != "bomb"):
				t.Fatalf("Get = %v, want a TooLargeError at %d bytes", err, tt.wantLimit)
			}
		})
	}
	s := New(fake.NewClientset().CoreV1(), "deploy-web", 3)
	if _, err := s.Save(ctx, Entry{Environment: "dev", Action: "plan"}, map[string][]byte{"report.json": make([]byte, MaxFileBytes+1)}); !errors.As(err, new(*TooLargeError)) {
		t.Errorf("Save(file over the limit) = %v, want a TooLargeError", err)
	}
}

// TestLastApplied: the live commit of an environment is its newest apply
// that applied; plans, refused and failed applies and other environments
// do not count.
func TestLastApplied(t *testing.T) {
	base := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		entries []Entry
		want    string // the commit; "" for none
	}{
		{"none", nil, ""},
		{"plan only", []Entry{{Environment: "dev", Action: "plan", Conclusion: "ready", Commit: "a"}}, ""},
		{"newest applied", []Entry{
			{Environment: "dev", Action: "apply", Conclusion: "applied", Commit: "a"},
			{Environment: "dev", Action: "apply", Conclusion: "applied", Commit: "b"},
			{Environment: "dev", Action: "plan", Conclusion: "ready", Commit: "c"},
		}, "b"},
		{"a failed apply after it", []Entry{
			{Environment: "dev", Action: "apply", Conclusion: "applied", Commit: "a"},
			{Environment: "dev", Action: "apply", Conclusion: "failed", Commit: "b"},
			{Environment: "dev", Action: "apply", Conclusion: "refused"},
		}, "a"},
		{"another environment's", []Entry{{Environment: "prod", Action: "apply", Conclusion: "applied", Commit: "p"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(fake.NewClientset().CoreV1(), "deploy-web", 20)
			for i, e := range tc.entries {
				e.Time = base.Add(time.Duration(i) * time.Minute)
				if _, err := s.Save(context.Background(), e, nil); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := s.LastApplied(context.Background(), "dev")
			if err != nil || ok != (tc.want != "") || got.Commit != tc.want {
				t.Errorf("LastApplied(dev) = %+v, %v, %v; want commit %q", got, ok, err, tc.want)
			}
		})
	}
}
