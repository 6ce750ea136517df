package kubeview_test

import (
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
)

// TestInformerStates checks that every informer of every platform namespace
// is reported, synced, and that the kinds holding objects have a recent last
// event while empty ones have none.
func TestInformerStates(t *testing.T) {
	before := time.Now()
	env := newTestEnv(t, []string{"shop", "pay"}, fixApp{ns: "shop", name: "web"})
	states := env.cache.InformerStates()
	want := 2 * (len(kubeview.Kinds()) + 1) // the registry and Apps per namespace (Events are read per request)
	if len(states) != want {
		t.Fatalf("len(InformerStates()) = %d, want %d", len(states), want)
	}
	byKey := map[string]kubeview.InformerState{}
	for i, s := range states {
		if i > 0 && (states[i-1].Namespace > s.Namespace || states[i-1].Namespace == s.Namespace && states[i-1].Kind >= s.Kind) {
			t.Errorf("InformerStates() not sorted at %d: %+v after %+v", i, s, states[i-1])
		}
		if !s.Synced || s.Forbidden {
			t.Errorf("state %s/%s = %+v, want synced and readable", s.Namespace, s.Kind, s)
		}
		byKey[s.Namespace+"/"+s.Kind] = s
	}
	for _, key := range []string{"shop/App", "shop/Deployment", "shop/Pod"} {
		if got := byKey[key].LastEvent; got.Before(before) || got.After(time.Now()) {
			t.Errorf("%s LastEvent = %v, want between %v and now", key, got, before)
		}
	}
	for _, key := range []string{"pay/App", "pay/Deployment", "shop/CronJob"} {
		if got := byKey[key].LastEvent; !got.IsZero() {
			t.Errorf("%s LastEvent = %v, want zero (no objects, no events)", key, got)
		}
	}
}
