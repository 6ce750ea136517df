package freeze

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

const testNamespace = "deploy-web"

func newTestStore(t *testing.T, objs ...runtime.Object) (*Store, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset(objs...)
	s := NewStore(cs.CoreV1(), testNamespace, signtest.Keys())
	s.now = func() time.Time { return at(t, "", "2026-12-02T00:00") }
	return s, cs
}

func TestStoreAddListRemove(t *testing.T) {
	ctx := context.Background()
	s, cs := newTestStore(t)
	if l, err := s.List(ctx); err != nil || len(l) != 0 {
		t.Fatalf("List() without a ConfigMap = %v, %v, want none", l, err)
	}
	a, err := s.Add(ctx, validOneOff(t))
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	if !idPattern.MatchString(a.ID) || !strings.HasPrefix(a.ID, "fz-") || !a.Created.Equal(s.now()) {
		t.Errorf("Add() = id %q created %s, want a fz- id created now", a.ID, a.Created)
	}
	b, err := s.Add(ctx, validRecurring(t))
	if err != nil {
		t.Fatalf("Add(recurring): %v", err)
	}
	l, err := s.List(ctx)
	if err != nil || len(l) != 2 || l[0].ID != a.ID || l[1].ID != b.ID {
		t.Fatalf("List() = %v, %v, want %s then %s", l, err, a.ID, b.ID)
	}
	cm, err := cs.CoreV1().ConfigMaps(testNamespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels[LabelKind] != "freezes" {
		t.Errorf("ConfigMap labels = %v, want %s=freezes", cm.Labels, LabelKind)
	}
	if got, err := s.Remove(ctx, a.ID); err != nil || got.ID != a.ID {
		t.Errorf("Remove(%s) = %v, %v, want it removed", a.ID, got.ID, err)
	}
	if _, err := s.Remove(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove(%s) again = %v, want ErrNotFound", a.ID, err)
	}
	if l, _ := s.List(ctx); len(l) != 1 || l[0].ID != b.ID {
		t.Errorf("List() after Remove = %v, want only %s", l, b.ID)
	}
}

func TestStoreAddRefuses(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t)
	past := validOneOff(t)
	past.Start, past.End = at(t, "", "2026-11-30T00:00"), at(t, "", "2026-12-01T00:00")
	if _, err := s.Add(ctx, past); err == nil || !strings.Contains(err.Error(), "freeze: end: 2026-12-01 00:00 UTC is in the past") {
		t.Errorf("Add(ended) = %v, want end is in the past", err)
	}
	bad := validOneOff(t)
	bad.Reason = ""
	if _, err := s.Add(ctx, bad); err == nil || !strings.Contains(err.Error(), "reason: required") {
		t.Errorf("Add(no reason) = %v, want reason: required", err)
	}
	// Fill the store to MaxFreezes directly, then one Add too many.
	full200 := make([]Freeze, MaxFreezes)
	for i := range full200 {
		full200[i] = validOneOff(t)
		full200[i].ID = fmt.Sprintf("fz-%d", i)
	}
	data, _ := json.Marshal(stored{Freezes: full200})
	s, _ = newTestStore(t, signedConfigMap(t, string(data)))
	var full *FullError
	if _, err := s.Add(ctx, validOneOff(t)); !errors.As(err, &full) || full.Freezes != MaxFreezes+1 {
		t.Errorf("Add(one too many) = %v, want a *FullError of %d freezes", err, MaxFreezes+1)
	}
	if l, _ := s.List(ctx); len(l) != MaxFreezes {
		t.Errorf("List() after a refused Add = %d freezes, want %d", len(l), MaxFreezes)
	}
}

func TestStoreRefusesMoreBytesThanAConfigMapHolds(t *testing.T) {
	// Few freezes, each with a scope of 100 long selectors (about 26 KB).
	f := validOneOff(t)
	for i := range scope.MaxSelectors {
		f.Scope.Apps = append(f.Scope.Apps, fmt.Sprintf("%03d-%s", i, strings.Repeat("a", scope.MaxSelectorBytes-4)))
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	var big List
	for range 40 {
		big = append(big, f)
	}
	s, _ := newTestStore(t)
	err := s.update(t.Context(), func(List) (List, error) { return big, nil })
	var full *FullError
	if !errors.As(err, &full) || full.Bytes <= MaxStoreBytes {
		t.Errorf("update(%d large freezes) = %v, want a *FullError over %d bytes", len(big), err, MaxStoreBytes)
	}
}

// TestStoreRetriesOnConflict: a write that loses to another writer reads
// again and applies its change to what the other wrote.
func TestStoreRetriesOnConflict(t *testing.T) {
	ctx := context.Background()
	s, cs := newTestStore(t)
	first, err := s.Add(ctx, validOneOff(t))
	if err != nil {
		t.Fatal(err)
	}
	conflicts := 0
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	cs.PrependReactor("update", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 2 {
			return false, nil, nil
		}
		conflicts++
		// Another writer adds a freeze between our read and our write
		// (through the tracker: the fake client is locked inside a reactor).
		obj, err := cs.Tracker().Get(gvr, testNamespace, ConfigMapName)
		if err != nil {
			t.Fatal(err)
		}
		cm := obj.(*corev1.ConfigMap).DeepCopy()
		var st stored
		if err := json.Unmarshal([]byte(cm.Data[DataKey]), &st); err != nil {
			t.Fatal(err)
		}
		other := validOneOff(t)
		other.ID = fmt.Sprintf("fz-other-%d", conflicts)
		data, _ := json.Marshal(stored{Freezes: append(st.Freezes, other)})
		e, err := s.doc.Sign(t.Context(), data)
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[DataKey], cm.Annotations[cmstore.AnnotationMAC] = e.Value, e.MAC
		if err := cs.Tracker().Update(gvr, cm, testNamespace); err != nil {
			t.Fatal(err)
		}
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, ConfigMapName, errors.New("changed"))
	})
	second, err := s.Add(ctx, validOneOff(t))
	if err != nil {
		t.Fatalf("Add after conflicts: %v", err)
	}
	l, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range l {
		ids = append(ids, f.ID)
	}
	if diff := cmp.Diff([]string{first.ID, "fz-other-1", "fz-other-2", second.ID}, ids); conflicts != 2 || diff != "" {
		t.Errorf("after %d conflicts, List() ids (-want +got):\n%s", conflicts, diff)
	}
}

func TestStoreGivesUpAfterManyConflicts(t *testing.T) {
	ctx := context.Background()
	s, cs := newTestStore(t)
	if _, err := s.Add(ctx, validOneOff(t)); err != nil {
		t.Fatal(err)
	}
	cs.PrependReactor("update", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, ConfigMapName, errors.New("changed"))
	})
	if _, err := s.Add(ctx, validOneOff(t)); err == nil || !strings.Contains(err.Error(), "changed under 16 writes in a row") {
		t.Errorf("Add under endless conflicts = %v, want a bounded give-up", err)
	}
}

func TestStoreStoredFreezeInvalid(t *testing.T) {
	ctx := context.Background()
	good := validOneOff(t)
	good.ID = "fz-good"
	bad := validOneOff(t)
	bad.ID, bad.Reason = "fz-bad", ""
	data, _ := json.Marshal(stored{Freezes: []Freeze{good, bad}})
	s, _ := newTestStore(t, signedConfigMap(t, string(data)))
	if _, err := s.List(ctx); err == nil || !strings.Contains(err.Error(), `freezes[1] (id "fz-bad"): reason: required`) {
		t.Errorf("List() with a bad hand edit = %v, want an error naming freezes[1] and its field", err)
	}
	if _, err := s.Remove(ctx, "fz-bad"); err != nil {
		t.Errorf("Remove(the bad one) = %v, want it removable", err)
	}
	if l, err := s.List(ctx); err != nil || len(l) != 1 || l[0].ID != "fz-good" {
		t.Errorf("List() after removing the bad one = %v, %v, want fz-good", l, err)
	}

	s, _ = newTestStore(t, signedConfigMap(t, `{"freezes":[],"extra":1}`))
	if _, err := s.List(ctx); err == nil || !strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Errorf("List() with an unknown field = %v, want it refused", err)
	}
}

func TestStorePrune(t *testing.T) {
	ctx := context.Background()
	s, cs := newTestStore(t)
	a, _ := s.Add(ctx, validOneOff(t)) // ends 2026-12-03 18:00
	long := validOneOff(t)
	long.End = at(t, "", "2026-12-10T00:00")
	b, _ := s.Add(ctx, long)

	before, _ := cs.CoreV1().ConfigMaps(testNamespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if pruned, err := s.Prune(ctx, at(t, "", "2026-12-03T17:00")); err != nil || len(pruned) != 0 {
		t.Errorf("Prune(before any end) = %v, %v, want nothing", pruned, err)
	}
	after, _ := cs.CoreV1().ConfigMaps(testNamespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if before.ResourceVersion != after.ResourceVersion {
		t.Errorf("Prune with nothing to prune wrote the ConfigMap (%s -> %s)", before.ResourceVersion, after.ResourceVersion)
	}
	pruned, err := s.Prune(ctx, at(t, "", "2026-12-03T18:00"))
	if err != nil || len(pruned) != 1 || pruned[0].ID != a.ID {
		t.Errorf("Prune(at the first end) = %v, %v, want %s", pruned, err, a.ID)
	}
	if l, _ := s.List(ctx); len(l) != 1 || l[0].ID != b.ID {
		t.Errorf("List() after Prune = %v, want %s", l, b.ID)
	}
}

// TestStoreEnd: ending a freeze by hand keeps what it froze (its End cut
// to the instant, the window it was in ending there) and removes one that
// has not started; one that is over, or unknown, is not found.
func TestStoreEnd(t *testing.T) {
	for _, tt := range []struct {
		name      string
		recurring bool
		id        string
		at        string
		kept      bool
		windows   int
		edge      string // the ended window's start–end, "" for none
		notFound  bool
	}{
		{name: "one-off, in its window", at: "2026-12-03T10:00", kept: true, windows: 1, edge: "12-03T08:00–12-03T10:00"},
		{name: "recurring, between windows", recurring: true, at: "2026-12-05T12:00", kept: true, windows: 3},
		{name: "recurring, in a window", recurring: true, at: "2026-12-05T09:00", kept: true, windows: 3, edge: "12-05T08:00–12-05T09:00"},
		{name: "not started: removed", at: "2026-12-02T12:00"},
		{name: "over already", at: "2026-12-04T00:00", kept: true, windows: 1, notFound: true},
		{name: "unknown", id: "fz-nope", at: "2026-12-03T10:00", kept: true, windows: 1, notFound: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s, _ := newTestStore(t)
			f := validOneOff(t)
			if tt.recurring {
				f = validRecurring(t)
			}
			added, err := s.Add(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			id := tt.id
			if id == "" {
				id = added.ID
			}
			now := at(t, "", tt.at)
			got, edge, err := s.End(ctx, id, now)
			if errors.Is(err, ErrNotFound) != tt.notFound || (err != nil && !tt.notFound) {
				t.Fatalf("End(%s, %s) error = %v, want not found %v", id, tt.at, err, tt.notFound)
			}
			var edgeText string
			if edge != nil {
				edgeText = edge.Window.Start.Format("01-02T15:04") + "–" + edge.Window.End.Format("01-02T15:04")
				if !edge.End || edge.Key() != added.ID+"@"+edge.Window.Start.Format(time.RFC3339) {
					t.Errorf("End(%s) edge = %+v, want the end of the window it was in", tt.at, edge)
				}
			}
			if edgeText != tt.edge {
				t.Errorf("End(%s) ended window = %q, want %q", tt.at, edgeText, tt.edge)
			}
			l, err := s.List(ctx)
			if err != nil {
				t.Fatalf("List() after End = %v, want the freezes readable", err)
			}
			if len(l) != map[bool]int{true: 1, false: 0}[tt.kept] {
				t.Fatalf("List() after End(%s) = %d freezes, want kept %v", tt.at, len(l), tt.kept)
			}
			if !tt.kept {
				return
			}
			n := 0
			for range l[0].Windows() {
				n++
			}
			wantEnd := now
			if tt.notFound {
				wantEnd = added.End
			}
			if n != tt.windows || !l[0].End.Equal(wantEnd) || (!tt.notFound && !got.End.Equal(now)) {
				t.Errorf("stored after End(%s) = end %s, %d windows; want end %s, %d windows", tt.at, l[0].End, n, wantEnd, tt.windows)
			}
		})
	}
}

// signedConfigMap is the freezes ConfigMap holding raw as deploy-web
// would have written it (signed with the test key).
func signedConfigMap(t *testing.T, raw string) *corev1.ConfigMap {
	t.Helper()
	e, err := NewStore(nil, testNamespace, signtest.Keys()).doc.Sign(t.Context(), []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: testNamespace,
		Annotations: map[string]string{cmstore.AnnotationMAC: e.MAC}}, Data: map[string]string{DataKey: e.Value}}
}

// TestStoreAddCleansText: a freeze's reason, ticket and author reach the
// store without format characters (a bidi override, zero-width spaces);
// a line break is still refused.
func TestStoreAddCleansText(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t)
	f := validOneOff(t)
	f.Reason = "fix \u202egnp.exe\u202c"
	f.Ticket = "https://tickets.example.com/\u200bCHG-1"
	f.Author = Author{Email: "alice@exa\u2066mple.com", Subject: "alice\ufeff"}
	got, err := s.Add(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.List(ctx)
	if err != nil || len(l) != 1 {
		t.Fatalf("List() = %v, %v, want one freeze", l, err)
	}
	for _, fr := range []Freeze{got, l[0]} {
		if fr.Reason != "fix gnp.exe" || fr.Ticket != "https://tickets.example.com/CHG-1" || fr.Author != (Author{Email: "alice@example.com", Subject: "alice"}) {
			t.Errorf("stored freeze reason %q, ticket %q, author %+v: want the format characters removed", fr.Reason, fr.Ticket, fr.Author)
		}
	}
	f.Reason = "two\nlines"
	if _, err := s.Add(ctx, f); err == nil || !strings.Contains(err.Error(), "reason: has a control character") {
		t.Errorf("Add(reason with a line break) = %v, want it refused", err)
	}
}

// TestBreakGlassCleansReason: the override's reason, which the audit
// record and the pages show, has no bidi control.
func TestBreakGlassCleansReason(t *testing.T) {
	f := validOneOff(t)
	f.ID = "f1"
	l := List{f}
	o, err := l.BreakGlass(at(t, "", "2026-12-03T12:00"), Apply, Target{Environment: "prod"}, BreakGlass{Reason: "hot\u202efix\u202c", Superadmin: true, By: Author{Subject: "sam"}})
	if err != nil || o == nil || o.Reason != "hotfix" {
		t.Fatalf("BreakGlass = %+v, %v, want an override with reason %q", o, err, "hotfix")
	}
}
