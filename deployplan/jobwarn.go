package deployplan

import (
	"fmt"
	"sort"
)

// newJobWarnings warns of every Job the apply would create that is not
// suspended and not in the template Job allowlist: it starts running as
// soon as it is created, and deploy-web will never replace it (a later
// change of its image is a blocker). It is a warning, not a blocker: a
// one-off Job is a normal thing to deploy, but the reviewer should see
// that the apply runs it.
func newJobWarnings(jobs map[string]JobReplacement) []string {
	var out []string
	for _, j := range jobs {
		if j.Result != JobNotFound || j.Suspended || j.Allowlisted {
			continue
		}
		out = append(out, fmt.Sprintf("Job %s does not exist yet and is not suspended: the apply creates it and it runs at once; it is not in templateJobs.allowlist, so deploy-web will never replace it (suspend it, or allowlist it, if it is a template Job)", j.Job))
	}
	sort.Strings(out)
	return out
}
