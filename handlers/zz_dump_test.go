package handlers

import (
	"fmt"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
)

func TestDump(t *testing.T) {
	rows := []kubeview.AppRow{{
		Name: "web", Namespace: "apps", Image: "ghcr.io/hanzoai/web:1.2.0", Version: "1.2.0",
		Running: []kubeview.VersionCount{{Version: "1.1.0", Image: "ghcr.io/hanzoai/web:1.1.0", Ready: 2}, {Version: "1.2.0", Image: "ghcr.io/hanzoai/web:1.2.0", Ready: 1}},
		Health: kubeview.Health{Status: kubeview.HealthProgressing, Message: "rollout 1/3"},
		Sync: kubeview.Sync{Status: kubeview.SyncOutOfSync, Message: "image differs"},
		Replicas: kubeview.Replicas{Desired: 3, Ready: 1}, HasDeployment: true, LastDeployed: testNow.Add(-5 * time.Minute),
	}}
	ts := newTestServer(t, newFakeView(rows))
	w := ts.get(t, "/", nil)
	fmt.Println(w.Code, w.Header(), w.Body.String())
	w = ts.do(t, request{target: "/"})
	fmt.Println(w.Code, w.Header(), w.Body.String())
}
