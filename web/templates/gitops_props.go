package templates

import (
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/planstore"
)

// GitOpsProps is an environment's GitOps state: where its desired state
// comes from, what is live, write-back and auto-sync (the GitOps panel
// of the environment page, and the API).
type GitOpsProps struct {
	Env       string
	Protected bool
	// Repo (without credentials), Ref and Path are the source; Head the
	// branch head last read, Rendered the commit the index rendered.
	Repo, Ref, Path string
	Head, Rendered  string
	// Live is the apply that made the live commit live (nil: none in the
	// history).
	Live *planstore.Entry
	// WriteBack is the environment's writeBack (nil: none).
	WriteBack *WriteBackProps
	// AutoSyncConfigured is autoSync.enabled in the config; Interval its
	// interval.
	AutoSyncConfigured bool
	Interval           time.Duration
	// AutoSync is the loop's state (nil: the loop does not run for it).
	AutoSync *autosync.Status
	// CanPause shows the pause and resume forms (superadmins); CSRF is
	// their token; Now is the page's time (the pause form's default end).
	CanPause bool
	CSRF     string
	Now      time.Time
	// Recent are the environment's newest automatic runs, from the audit
	// trail (every replica reads it), newest first.
	Recent []audit.Record
	// Errors are reads that failed (their part is not shown).
	Errors []string
}

// WriteBackProps is an environment's writeBack.
type WriteBackProps struct {
	Mode, Branch string
}

// AutoRunOutcome is how an automatic run reads on the pages: "applied",
// or "failed" for anything else (a blocked plan, a refusal, an error),
// its blockers or error saying why.
func AutoRunOutcome(r autosync.Run) string {
	if r.Outcome == autosync.OutcomeApplied {
		return "applied"
	}
	return "failed"
}

// InSync reports whether the live commit is the branch head.
func (p GitOpsProps) InSync() bool {
	return p.Live != nil && p.Head != "" && p.Live.Commit == p.Head
}

// joinComma joins xs with ", ".
func joinComma(xs []string) string { return strings.Join(xs, ", ") }

// AppGitProps is the desired state of an App an environment renders from
// git: the environment, the commit rendered, write-back and auto-sync.
type AppGitProps struct {
	Env, Commit string
	// WriteBack is the environment's (nil: none; a rollback is refused).
	WriteBack *WriteBackProps
	// AutoSync is the loop's state of the environment (nil: off).
	AutoSync *autosync.Status
	// CommitTags says a rollback may also go to a commit tag: the
	// environment writes back and its catalog is in the repository, where a
	// commit-mode catalog moves back with the App.
	CommitTags bool
}

// TakesCommitTag reports whether the App's rollback takes version as a
// commit tag (CommitTags, and version is 7 to 40 lowercase hex: the
// handlers' gate, deployplan.ValidCommit). Nil-safe.
func (g *AppGitProps) TakesCommitTag(version string) bool {
	return g != nil && g.CommitTags && deployplan.ValidCommit(version)
}

// AutoRecordOutcome is how an automatic run's audit record reads on the
// pages, as AutoRunOutcome: "applied", or "failed" (refused: a blocked
// plan, a lock; failed).
func AutoRecordOutcome(r audit.Record) string {
	if r.Outcome == audit.OutcomeSucceeded {
		return "applied"
	}
	return "failed"
}

// gitOpsMoreTitle names the GitOps panel's fold by what it holds.
func gitOpsMoreTitle(p GitOpsProps) string {
	if p.CanPause && p.AutoSync != nil && !p.AutoSync.Paused {
		return "Source, write-back and pause"
	}
	return "Source and write-back"
}
