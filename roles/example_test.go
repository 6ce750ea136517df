package roles_test

import (
	"fmt"

	"github.com/hanzoai/deploy-web/roles"
)

// A handler resolves the person's grants once per request and asks the
// same question for the route it serves and for every button it draws.
func ExamplePolicy_For() {
	policy, err := roles.Parse("roles.yaml", []byte(`
bindings:
  - role: viewer
    groups: [engineering]
  - role: deployer
    groups: [team-shop]
    scope: {environments: [dev, staging], apps: ["shop-*"]}
`), roles.Options{})
	if err != nil {
		panic(err)
	}
	g := policy.For(roles.Principal{Subject: "u1", Groups: []string{"engineering", "team-shop"}})
	target := roles.Target{Cluster: "eu-1", Environment: "staging", Namespace: "shop", App: "shop-web"}
	for _, a := range []roles.Action{roles.View, roles.Sync, roles.Logs} {
		d := g.Allow(a, target)
		fmt.Printf("%s: %v (%s)\n", a, d.Allowed, d.Because)
	}
	// Output:
	// view: true (viewer through roles.yaml bindings[0] (group "engineering"))
	// sync: true (deployer through roles.yaml bindings[1] (group "team-shop") in env=dev,staging app=shop-*)
	// logs: false (logs at cluster=eu-1 env=staging ns=shop app=shop-web needs viewer or deployer or approver or superadmin with logs: true; you have viewer everywhere (roles.yaml bindings[0]), deployer in env=dev,staging app=shop-* (roles.yaml bindings[1]))
}
