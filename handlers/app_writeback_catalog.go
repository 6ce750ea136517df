package handlers

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/hanzoai/deploy-web/deployplan"
)

// catalogError is a version change the environment's catalog would block:
// the plan of the commit would not be ready, so nothing is committed.
type catalogError struct{ msg string }

func (e *catalogError) Error() string { return e.msg }

// checkCatalogAdmits refuses to move App kind/name of environment env to
// image when env's catalog, read from tree (the repository the commit is
// made on), would block that image: the plan's own rule (SourceChecks) on
// the App alone. A version-mode catalog admits a release it lists (it may
// list several of one image); a commit-mode catalog admits only images
// tagged with its commit, never a version. A catalog outside the
// repository (an absolute path on disk) is not read here: the plan checks
// it.
func checkCatalogAdmits(tree fs.FS, env *deployplan.Environment, kind, name, image string) error {
	p, ok := env.CatalogInRepo()
	if !ok {
		return nil
	}
	cat, err := deployplan.ReadCatalogFS(tree, p)
	if err != nil {
		return &catalogError{fmt.Sprintf("environment %s's catalog %s does not read (%v): fix it in the repository; nothing was pushed",
			env.Name, p, strings.TrimPrefix(err.Error(), "deployplan: "))}
	}
	ref := kind + "/" + name
	w := deployplan.Workload{Kind: kind, Name: name, Containers: []deployplan.Container{{Image: image}}}
	var found []string
	for _, b := range deployplan.SourceChecks([]deployplan.Workload{w}, cat, deployplan.EnvMirrors{}) {
		for _, a := range b.Affected {
			if a == ref {
				found = append(found, b.Message)
				break
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	why := strings.Join(found, "; ")
	if cat.Mode == deployplan.CatalogModeVersion {
		return &catalogError{fmt.Sprintf("environment %s's catalog %s (version mode) does not admit %s (%s), so the plan of the commit would be blocked: list that release in the catalog (a service entry with its tag and digest; a version-mode catalog may list several releases of an image) and try again; nothing was pushed",
			env.Name, p, image, why)}
	}
	return &catalogError{fmt.Sprintf("environment %s's catalog %s is in commit mode: every image must be tagged with its commit %s, so %s would be blocked (%s): use a version-mode catalog that lists the releases to roll back to (docs/gitops.md); nothing was pushed",
		env.Name, p, cat.Commit, image, why)}
}
