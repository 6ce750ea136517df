package kubeview_test

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/appcr"
)

// TestTouchedRestart: a pod's restart leaves the App's row as it was, yet
// the App is reported touched (a timeline records restarts), and only that
// App; AppPods returns the pod as updated.
func TestTouchedRestart(t *testing.T) {
	env := newTestEnv(t, []string{"prod"}, fixApp{ns: "prod", name: "web"}, fixApp{ns: "prod", name: "api"})
	c := env.cache
	if got := c.TakeTouched(); !slices.Equal(got, []string{"prod/api", "prod/web"}) {
		t.Errorf("TakeTouched() after the first sync = %q, want [prod/api prod/web]", got)
	}
	pods := c.AppPods("prod", "web")
	if len(pods) != 3 {
		t.Fatalf("AppPods(prod, web) = %d pods, want 3", len(pods))
	}
	rowBefore, _ := c.Row("prod", "web")
	p := pods[0].DeepCopy()
	p.Status.ContainerStatuses[0].RestartCount = 4
	if _, err := env.cs.CoreV1().Pods("prod").UpdateStatus(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	var touched []string
	for !slices.Contains(touched, "prod/web") {
		select {
		case <-c.Touched():
			touched = append(touched, c.TakeTouched()...)
		case <-deadline:
			t.Fatalf("TakeTouched() = %q within 10s of a restart, want prod/web", touched)
		}
	}
	if slices.Contains(touched, "prod/api") {
		t.Errorf("TakeTouched() = %q after a restart of a pod of web, want no prod/api", touched)
	}
	if rowAfter, _ := c.Row("prod", "web"); rowAfter.Health != rowBefore.Health {
		t.Errorf("Row(prod, web).Health = %v after a restart, want %v (the row unchanged)", rowAfter.Health, rowBefore.Health)
	}
	var restarts int32
	for _, q := range c.AppPods("prod", "web") {
		if q.Name == p.Name {
			restarts = q.Status.ContainerStatuses[0].RestartCount
		}
	}
	if restarts != 4 {
		t.Errorf("AppPods(prod, web): pod %s restarts = %d, want 4", p.Name, restarts)
	}
}

// TestAppOf maps objects (an Event's involved object) to their App.
func TestAppOf(t *testing.T) {
	web := fixApp{ns: "prod", name: "web"}
	env := newTestEnv(t, []string{"prod", "stage"}, web, fixApp{ns: "stage", name: "worker"})
	c := env.cache
	pod := c.AppPods("prod", "web")[0]
	rs := pod.OwnerReferences[0].Name
	for _, tt := range []struct {
		ns, group, kind, name string
		want                  string
		ok                    bool
	}{
		{"prod", appcr.GroupVersion.Group, "App", "web", "web", true},
		{"prod", "apps", "Deployment", "web", "web", true},
		{"prod", "apps", "ReplicaSet", rs, "web", true},
		{"prod", "", "Pod", pod.Name, "web", true},
		{"prod", "", "Service", "web", "web", true},
		{"prod", "", "Pod", "not-cached", "", false},
		{"prod", "", "Secret", "web", "", false},
		{"prod", appcr.GroupVersion.Group, "App", "nope", "", false},
		{"stage", "", "Pod", pod.Name, "", false},
		{"elsewhere", "apps", "Deployment", "web", "", false},
	} {
		got, ok := c.AppOf(tt.ns, tt.group, tt.kind, tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("AppOf(%q, %q, %q, %q) = %q, %v, want %q, %v", tt.ns, tt.group, tt.kind, tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
