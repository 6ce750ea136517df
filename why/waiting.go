package why

import (
	"fmt"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/web/paths"
)

// waitingReasons: the first App the App depends on in git
// (deployplan.DependsOn, read by the caller into Git.DependsOn) that is
// not settled now (deployplan.Settled, the rule the apply waits on), in
// the App's namespace: an apply writes nothing of the App until it is.
func waitingReasons(app App, c Cluster) []Reason {
	if app.Git == nil || c == nil {
		return nil
	}
	for _, dep := range app.Git.DependsOn {
		row, ok := c.Row(app.Namespace, dep)
		ref := "App/" + dep
		if !ok {
			return []Reason{{Kind: Waiting, Message: fmt.Sprintf("%s waits for %s, which does not run in %s: an apply writes %s only once %s is healthy",
				app.Name, ref, app.Namespace, app.Name, ref), Link: paths.App(app.Cluster, app.Namespace, dep)}}
		}
		if deployplan.Settled(row.Health) {
			continue
		}
		msg := fmt.Sprintf("%s waits for %s, which is %s", app.Name, ref, textfmt.OrDash(string(row.Health.Status)))
		if row.Health.Message != "" {
			msg += ": " + row.Health.Message
		}
		msg += fmt.Sprintf("; an apply writes %s only once %s is healthy", app.Name, ref)
		return []Reason{{Kind: Waiting, Message: msg, Link: paths.App(app.Cluster, app.Namespace, dep)}}
	}
	return nil
}
