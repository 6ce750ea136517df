package templates

import "time"

// EnvDiffProps is the diff page of an environment,
// /environments/{env}/diff?from=&to=: two records, a record and live, or
// a ref and live, per resource.
type EnvDiffProps struct {
	Layout LayoutProps
	Env    string
	// From and To are the query's values (a record id, "live",
	// "ref:REF"), echoed in the form.
	From, To string
	// Mode is the diffs' layout, "split" or "unified".
	Mode string
	// Error says why no diff is shown (a bad from or to); Diff is nil then.
	Error string
	Diff  *EnvDiffView
}

// EnvDiffView is a comparison's result.
type EnvDiffView struct {
	// Commit is the commit a ref resolved to ("" without a ref).
	Commit                             string
	Added, Changed, Removed, Unchanged int
	// Omitted counts the resources not compared (over the bound),
	// LinesCut says some diffs were cut, Outside lists the resources not
	// read from the cluster (outside the environment's boundary).
	Omitted   int
	LinesCut  bool
	Outside   []string
	Resources []EnvDiffResource
	// JSONURL is the same diff in the JSON API.
	JSONURL string
	// Notes are the release notes between two records; nil otherwise.
	Notes *ReleaseNotesProps
}

// ReleaseNotesProps are the commit messages from one record's commit
// (From, excluded) to another's (To), newest first.
type ReleaseNotesProps struct {
	From, To string
	Commits  []ReleaseNoteProps
	// Incomplete says why the list stops before From; Error why there
	// is none.
	Incomplete, Error string
}

// ReleaseNoteProps is one commit: HTML is its message rendered by
// web/markdown (safe to embed as is).
type ReleaseNoteProps struct {
	Hash, Author string
	Time         time.Time
	HTML         string
	Cut          bool
}

// EnvDiffResource is one added, changed or removed resource.
type EnvDiffResource struct {
	// Key reads "Deployment.apps web/api"; Anchor is its id on the page.
	Key, Anchor string
	// Status is added, changed or removed; Summary is what the page says
	// ("changed (hash)" for a Secret).
	Status, Summary string
	Secret          bool
	LinesCut        bool
	Error           string
	View            DiffTableProps
}

// otherMode is the layout the toggle switches to.
func otherMode(mode string) string {
	if mode == "unified" {
		return "split"
	}
	return "unified"
}

// notesRange is "abc1234..def5678", the commits the notes span.
func notesRange(n ReleaseNotesProps) string { return shortSHA(n.From) + ".." + shortSHA(n.To) }
