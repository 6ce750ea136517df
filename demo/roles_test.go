package demo

import (
	"testing"

	"github.com/hanzoai/deploy-web/devidp"
	"github.com/hanzoai/deploy-web/roles"
)

// TestDemoRoles: the roles file the demo writes parses, and gives each demo
// login the role the README's login table promises.
func TestDemoRoles(t *testing.T) {
	p, err := roles.Parse(RolesFileName, []byte(rolesYAML()), roles.Options{})
	if err != nil {
		t.Fatalf("roles.Parse(demo roles) error = %v", err)
	}
	dev := roles.Target{Environment: DevEnvironment, Namespace: StagingNamespace}
	prod := roles.Target{Environment: ProdEnvironment, Namespace: ProductionNamespace}
	app := roles.Target{Cluster: "devcluster", Namespace: DeployerNamespace, App: "web"}
	other := roles.Target{Cluster: "devcluster", Namespace: "payments", App: "ledger"}
	want := map[string]map[string]bool{
		"admin":    {"view": true, "apply dev": true, "apply prod": true, "sync": true, "logs": true, "approve prod": true, "sync elsewhere": true, "view elsewhere": true},
		"viewer":   {"view": true, "view elsewhere": true},
		"deployer": {"view": true, "apply dev": true, "sync": true, "logs": true},
		"approver": {"view": true, "approve prod": true, "view elsewhere": true},
		"guest":    {},
	}
	for _, u := range devidp.DefaultUsers() {
		w, ok := want[u.Username]
		if !ok {
			t.Errorf("demo login %q has no expectation here: add it", u.Username)
			continue
		}
		pr := roles.Principal{Subject: u.Username, Email: u.Email, EmailVerified: true, Groups: u.Groups, Admin: u.Username == "admin"}
		for _, c := range []struct {
			name string
			a    roles.Action
			t    roles.Target
		}{
			{"view", roles.View, app}, {"apply dev", roles.Apply, dev}, {"apply prod", roles.Apply, prod},
			{"sync", roles.Sync, app}, {"logs", roles.Logs, app}, {"approve prod", roles.Approve, prod},
			{"sync elsewhere", roles.Sync, other}, {"view elsewhere", roles.View, other},
		} {
			if got := p.Allow(pr, c.a, c.t).Allowed; got != w[c.name] {
				t.Errorf("demo login %s: %s = %v, want %v", u.Username, c.name, got, w[c.name])
			}
		}
	}
}
