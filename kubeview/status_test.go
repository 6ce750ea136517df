package kubeview_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	restfake "k8s.io/client-go/rest/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/deploy-web/kubeview"
)

// TestForbiddenKindIsAWarning: a kind the service account may not read is
// a visible warning, not a cache that never syncs.
func TestForbiddenKindIsAWarning(t *testing.T) {
	cs := newTestClientset()
	cs.PrependReactor("list", "persistentvolumeclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, "", nil)
	})
	env := startCache(t.Context(), t, cs, newTestDynamic(), []string{"apps"})
	st := env.cache.Status()
	if !st.Synced {
		t.Errorf("Status().Synced = false, want true (a forbidden kind must not block readiness)")
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "PersistentVolumeClaim") || !strings.Contains(st.Warnings[0], "forbidden") {
		t.Errorf("Status().Warnings = %q, want one naming PersistentVolumeClaim as forbidden", st.Warnings)
	}
}

// TestUnreachableCluster: when the apiserver stops answering, the cache
// keeps its data and says since when it has not heard from the cluster.
func TestUnreachableCluster(t *testing.T) {
	cs := newTestClientset()
	fail := make(chan struct{})
	cs.disc.rest = &restfake.RESTClient{
		NegotiatedSerializer: cs.disc.rest.NegotiatedSerializer,
		Client: restfake.CreateHTTPClient(func(*http.Request) (*http.Response, error) {
			select {
			case <-fail:
				return nil, context.DeadlineExceeded
			default:
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
			}
		}),
	}
	c, err := kubeview.New(cs, newTestDynamic(), discardLogger(), kubeview.Options{Namespaces: []string{"apps"}, ProbeInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.Start(t.Context())
	waitStatus(t, c, "reachable", func(st kubeview.Status) bool { return st.Reachable && !st.LastContact.IsZero() })
	close(fail)
	st := waitStatus(t, c, "unreachable", func(st kubeview.Status) bool { return !st.Reachable })
	if st.LastContact.IsZero() || st.Error == "" {
		t.Errorf("Status() = %+v, want the last contact time and an error to show", st)
	}
	if strings.Contains(st.Error, "deadline") {
		t.Errorf("Status().Error = %q, want a message for users, not the raw error", st.Error)
	}
}

func waitStatus(t *testing.T, c *kubeview.Cache, what string, ok func(kubeview.Status) bool) kubeview.Status {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := c.Status()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache never %s: %+v", what, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
