package demo

import (
	"fmt"
	"os"
	"path/filepath"
)

// DeployerNamespace is the platform namespace whose Apps the demo's
// deployer login syncs and rolls back (besides planning and applying the
// dev environment).
const DeployerNamespace = "storefront"

// RolesFileName is the demo's roles file (deploy-web serve --roles) in the
// demo folder.
const RolesFileName = "roles.yaml"

// rolesYAML is the demo's roles file: the demo logins' groups
// (devidp.DefaultUsers) bound to roles. admin is a superadmin through the
// admin claim, which needs no binding; guest's group is bound to nothing.
func rolesYAML() string {
	return fmt.Sprintf(`# deploy-web demo roles (written by `+"`deploy-web demo`"+`; see docs/roles.md).
bindings:
  # viewer reads the whole fleet, trees, diffs and history: no logs, no buttons.
  - role: viewer
    groups: [viewers]
  # deployer plans, applies, syncs and rolls back in environment %[1]s and
  # in namespace %[3]s, and reads logs there.
  - role: deployer
    groups: [deployers]
    scope: {environments: [%[1]s]}
    logs: true
  - role: deployer
    groups: [deployers]
    scope: {namespaces: [%[3]s]}
    logs: true
  # approver approves promotions into %[2]s and reads everything.
  - role: approver
    groups: [approvers]
    scope: {environments: [%[2]s]}
  - role: viewer
    groups: [approvers]
`, DevEnvironment, ProdEnvironment, DeployerNamespace)
}

// writeRoles writes dir/roles.yaml and returns its path.
func writeRoles(dir string) (string, error) {
	path := filepath.Join(dir, RolesFileName)
	if err := os.WriteFile(path, []byte(rolesYAML()), 0o600); err != nil {
		return "", fmt.Errorf("demo: write %s: %w", path, err)
	}
	return path, nil
}
