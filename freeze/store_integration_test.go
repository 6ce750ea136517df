package freeze

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

// TestStoreOnRealCluster: two replicas (each its own client) add and
// remove freezes at once; none of the writes is lost, and a freeze lapses
// by itself with nothing written.
func TestStoreOnRealCluster(t *testing.T) {
	env := platformtest.Start(t, platformtest.Options{Namespaces: []string{testNamespace}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	replica := func() *Store {
		return NewStore(kubernetes.NewForConfigOrDie(platformtest.AdminConfig(env.Cluster.Config)).CoreV1(), testNamespace, signtest.Keys())
	}
	stores := []*Store{replica(), replica()}

	// Seed freezes to remove while the adds race.
	now := time.Now()
	freeze := func(who string, i int) Freeze {
		return Freeze{
			Scope:  scope.Scope{Environments: []string{"prod"}},
			Start:  now.Add(-time.Minute),
			End:    now.Add(time.Hour),
			Reason: fmt.Sprintf("%s %d", who, i),
			Author: Author{Subject: who},
		}
	}
	var seeded []string
	for i := range 4 {
		f, err := stores[0].Add(ctx, freeze("seed", i))
		if err != nil {
			t.Fatal(err)
		}
		seeded = append(seeded, f.ID)
	}

	const perWriter = 8
	var (
		mu    sync.Mutex
		added []string
		wg    sync.WaitGroup
	)
	for w, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				f, err := s.Add(ctx, freeze(fmt.Sprintf("writer-%d", w), i))
				if err != nil {
					t.Errorf("writer %d: Add: %v", w, err)
					return
				}
				mu.Lock()
				added = append(added, f.ID)
				mu.Unlock()
				if i < 2 {
					if _, err := s.Remove(ctx, seeded[2*w+i]); err != nil {
						t.Errorf("writer %d: Remove(%s): %v", w, seeded[2*w+i], err)
					}
				}
			}
		}()
	}
	wg.Wait()
	l, err := stores[1].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range l {
		got = append(got, f.ID)
	}
	slices.Sort(got)
	slices.Sort(added)
	if !slices.Equal(got, added) {
		t.Errorf("after %d concurrent adds and 4 removes, List() = %d freezes %v, want exactly the added %v", 2*perWriter, len(got), got, added)
	}

	// A freeze that ends in two seconds lapses by itself.
	short := freeze("short", 0)
	short.Scope = scope.Scope{Environments: []string{"staging"}}
	short.End = time.Now().Add(2 * time.Second)
	if _, err := stores[0].Add(ctx, short); err != nil {
		t.Fatal(err)
	}
	staging := Target{Environment: "staging", App: "web"}
	l, err = stores[0].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var fe *FrozenError
	if err := l.Check(time.Now(), Sync, staging); !errors.As(err, &fe) {
		t.Fatalf("Check(sync) during the short freeze = %v, want a *FrozenError", err)
	}
	cm, err := env.Kube.CoreV1().ConfigMaps(testNamespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(short.End) + 100*time.Millisecond)
	l, err = stores[1].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(time.Now(), Sync, staging); err != nil {
		t.Errorf("Check(sync) after the short freeze ended = %v, want nil", err)
	}
	later, err := env.Kube.CoreV1().ConfigMaps(testNamespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if later.ResourceVersion != cm.ResourceVersion {
		t.Errorf("the ConfigMap was written (%s -> %s) while the freeze lapsed; nothing should write", cm.ResourceVersion, later.ResourceVersion)
	}
	pruned, err := stores[1].Prune(ctx, time.Now())
	if err != nil || len(pruned) != 1 || pruned[0].Reason != "short 0" {
		t.Errorf("Prune() = %v, %v, want the short freeze", pruned, err)
	}

	// A person edits the freezes through the API (kubectl edit: every
	// prod freeze moved to an environment nobody deploys): the gate of
	// either replica refuses every write, as frozen and unknown, and
	// nothing can be written on top of the edit.
	cm, err = env.Kube.CoreV1().ConfigMaps(testNamespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[DataKey] = strings.ReplaceAll(cm.Data[DataKey], `"prod"`, `"nowhere"`)
	if _, err := env.Kube.CoreV1().ConfigMaps(testNamespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		_, err := NewGate(s).Check(ctx, Apply, Target{Environment: "prod"}, nil)
		if _, ok := cmstore.IsTampered(err); !ok || !errors.Is(err, ErrUnreadable) {
			t.Errorf("replica %d: Check(apply) after a hand edit = %v, want ErrUnreadable and a *cmstore.TamperedError", i, err)
		}
	}
	if _, err := stores[0].Add(ctx, freeze("after-edit", 0)); !errors.As(err, new(*cmstore.TamperedError)) {
		t.Errorf("Add() after a hand edit = %v, want a *cmstore.TamperedError", err)
	}
}
