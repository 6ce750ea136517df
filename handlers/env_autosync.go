package handlers

import (
	"context"
	"slices"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// AutoSyncState reads and pauses the auto-sync of environments
// (implemented by the auto-sync loop of serve).
type AutoSyncState interface {
	// Status is env's auto-sync state; ok is false when env has none.
	Status(ctx context.Context, env string) (st autosync.Status, ok bool, err error)
	Pause(ctx context.Context, env, reason string, until time.Time, by string) (autosync.Pause, error)
	Resume(ctx context.Context, env, by string) (autosync.Pause, error)
}

// sourceStatuses reads the render state of the environments (their
// branch heads) when the desired source keeps one (envsource.Index).
type sourceStatuses interface {
	Status() []envsource.EnvStatus
}

// gitOpsOf is environment e's GitOps state: its source and branch head,
// the commit live, write-back and auto-sync. A read that fails leaves its
// part out and says so in Errors (the page shows the rest).
func (s *Server) gitOpsOf(ctx context.Context, e *envconfig.Environment) templates.GitOpsProps {
	p := templates.GitOpsProps{Env: e.Name, Protected: e.Protected,
		Repo: envconfig.RedactURL(e.Source.Repo), Ref: e.Source.Ref, Path: e.Source.Path}
	if ss, ok := s.opts.Desired.(sourceStatuses); ok {
		for _, st := range ss.Status() {
			if st.Environment == e.Name {
				p.Head, p.Rendered = st.Head, st.Commit
				if p.Head == "" {
					p.Head = st.Commit
				}
			}
		}
	}
	live, from, err := s.liveEntry(ctx, e.Name)
	if err != nil {
		s.log.Warn(from+" unreadable", "environment", e.Name, "err", err)
		p.Errors = append(p.Errors, "the "+from+" could not be read: the commit live is not shown")
	}
	p.Live = live
	if wb := e.WriteBack; wb != nil {
		branch, _ := e.WriteBackBranch()
		p.WriteBack = &templates.WriteBackProps{Mode: string(wb.Mode), Branch: branch}
	}
	if e.AutoSync != nil && !e.Protected {
		p.AutoSyncConfigured = e.AutoSync.Enabled
		p.Interval = e.AutoSync.IntervalOrDefault()
	}
	if p.AutoSyncConfigured && s.opts.Audit != nil {
		recent, err := s.recentAutoRuns(ctx, e.Name)
		if err != nil {
			s.log.Warn("audit trail unreadable", "environment", e.Name, "err", err)
			p.Errors = append(p.Errors, "the audit trail could not be read: the recent automatic runs are not shown")
		}
		p.Recent = recent
	}
	if s.opts.AutoSync != nil {
		st, ok, err := s.opts.AutoSync.Status(ctx, e.Name)
		if err != nil {
			s.log.Warn("auto-sync pauses unreadable", "environment", e.Name, "err", err)
			if te, ok := cmstore.IsTampered(err); ok {
				p.Errors = append(p.Errors, "auto-sync stays paused in every environment: "+te.Public())
			} else {
				p.Errors = append(p.Errors, "the auto-sync pauses could not be read")
			}
		}
		if ok {
			p.AutoSync = &st
		}
	}
	return p
}

// liveEntry is what is live in env: its newest apply that applied, from
// the audit trail when one is kept (it holds every apply, the command
// line's too), else from the plan history; nil when none. from names the
// one read ("" when neither is kept).
func (s *Server) liveEntry(ctx context.Context, env string) (live *planstore.Entry, from string, err error) {
	switch {
	case s.opts.Audit != nil:
		rec, ok, err := audit.LastApplied(ctx, s.opts.Audit, env)
		if err != nil || !ok {
			return nil, "audit trail", err
		}
		return &planstore.Entry{Environment: env, Action: "apply", Commit: rec.Commit, Time: rec.Time, User: rec.Actor.String()}, "audit trail", nil
	case s.opts.Environments != nil:
		e, ok, err := s.opts.Environments.Store().LastApplied(ctx, env)
		if err != nil || !ok {
			return nil, "plan history", err
		}
		return &e, "plan history", nil
	}
	return nil, "", nil
}

// gitOpsJSON is an environment's GitOps state in the API.
type gitOpsJSON struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	Cluster   string         `json:"cluster,omitempty"`
	Protected bool           `json:"protected"`
	Source    sourceJSON     `json:"source"`
	Live      *liveJSON      `json:"live"`
	WriteBack *writeBackJSON `json:"writeBack"`
	AutoSync  autoSyncJSON   `json:"autoSync"`
	Errors    []string       `json:"errors,omitempty"`
}

type sourceJSON struct {
	Repo string `json:"repo"`
	Ref  string `json:"ref"`
	Path string `json:"path"`
	// Head is the branch head last read ("" before one, or for a local
	// folder).
	Head string `json:"head"`
}

type liveJSON struct {
	Commit    string    `json:"commit"`
	AppliedAt time.Time `json:"appliedAt"`
	Actor     string    `json:"actor"`
}

type writeBackJSON struct {
	Mode   string `json:"mode"`
	Branch string `json:"branch"`
}

type autoSyncJSON struct {
	Enabled     bool         `json:"enabled"`
	SelfHeal    bool         `json:"selfHeal"`
	Interval    string       `json:"interval,omitempty"`
	Paused      bool         `json:"paused"`
	PausedUntil *time.Time   `json:"pausedUntil"`
	Reason      string       `json:"reason"`
	PausedBy    string       `json:"pausedBy,omitempty"`
	LastRun     *lastRunJSON `json:"lastRun"`
	LastError   string       `json:"lastError,omitempty"`
}

type lastRunJSON struct {
	Time    time.Time `json:"time"`
	Trigger string    `json:"trigger"`
	Commit  string    `json:"commit"`
	// Outcome is as the pages show it: "applied", or "failed" (a
	// blocked plan, a refusal, an error); Result is the loop's own word
	// (applied, blocked, refused, failed, error), or, read from the audit
	// trail on a replica without the Lease, the record's (succeeded,
	// refused, failed).
	Outcome  string   `json:"outcome"`
	Result   string   `json:"result"`
	Blockers []string `json:"blockers"`
	Objects  []string `json:"objects,omitempty"`
	Run      *runJSON `json:"run,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// gitOpsToJSON is p in the API's shape; namespace and cluster come from e.
func gitOpsToJSON(e *envconfig.Environment, cluster string, p templates.GitOpsProps) gitOpsJSON {
	out := gitOpsJSON{Name: e.Name, Namespace: e.Namespace, Cluster: cluster, Protected: e.Protected,
		Source: sourceJSON{Repo: p.Repo, Ref: p.Ref, Path: p.Path, Head: p.Head}, Errors: p.Errors}
	if p.Live != nil {
		out.Live = &liveJSON{Commit: p.Live.Commit, AppliedAt: p.Live.Time, Actor: p.Live.User}
	}
	if p.WriteBack != nil {
		out.WriteBack = &writeBackJSON{Mode: p.WriteBack.Mode, Branch: p.WriteBack.Branch}
	}
	if p.AutoSyncConfigured {
		out.AutoSync.Interval = p.Interval.String()
	}
	if st := p.AutoSync; st != nil {
		out.AutoSync.Enabled, out.AutoSync.SelfHeal, out.AutoSync.LastError = st.Enabled, st.SelfHeal, st.LastError
		if st.Paused {
			until := st.PausedUntil
			out.AutoSync.Paused, out.AutoSync.PausedUntil, out.AutoSync.Reason, out.AutoSync.PausedBy = true, &until, st.PauseReason, st.PausedBy
		}
		if r := st.LastRun; r != nil {
			lr := &lastRunJSON{Time: r.Time, Trigger: string(r.Trigger), Commit: r.Commit, Outcome: templates.AutoRunOutcome(*r), Result: string(r.Outcome),
				Blockers: append([]string{}, r.Blockers...), Objects: r.Objects, Error: r.Error}
			if r.RunID != "" {
				lr.Run = &runJSON{ID: r.RunID, URL: paths.EnvRun(e.Name, r.RunID)}
			}
			out.AutoSync.LastRun = lr
		}
	}
	if out.AutoSync.LastRun == nil && len(p.Recent) > 0 {
		// This replica does not hold the Lease (or has not run yet): the
		// newest run in the audit trail.
		r := p.Recent[0]
		out.AutoSync.LastRun = &lastRunJSON{Time: r.Time, Trigger: string(r.Verb), Commit: r.Commit, Outcome: templates.AutoRecordOutcome(r),
			Result: string(r.Outcome), Blockers: append([]string{}, r.Blockers...)}
	}
	return out
}

// appGit is the desired state in git of App a, when an environment
// renders it (nil otherwise).
func (s *Server) appGit(ctx context.Context, a appRef) *templates.AppGitProps {
	g := s.renderedBy(a)
	if g == nil {
		return nil
	}
	out := &templates.AppGitProps{Env: g.env.Name, Commit: g.desired.Commit, CommitTags: gitops.CommitTagEnv(g.env)}
	if wb := g.env.WriteBack; wb != nil {
		branch, _ := g.env.WriteBackBranch()
		out.WriteBack = &templates.WriteBackProps{Mode: string(wb.Mode), Branch: branch}
	}
	if s.opts.AutoSync != nil {
		if st, ok, _ := s.opts.AutoSync.Status(ctx, g.env.Name); ok {
			out.AutoSync = &st
		}
	}
	return out
}

// maxRecentAutoRuns bounds the automatic runs the GitOps panel lists.
const maxRecentAutoRuns = 5

// recentAutoRuns are env's newest auto-sync and self-heal records, newest
// first: what every replica shows, the Lease holder or not.
func (s *Server) recentAutoRuns(ctx context.Context, env string) ([]audit.Record, error) {
	var out []audit.Record
	for _, verb := range []audit.Verb{audit.VerbAutoSync, audit.VerbSelfHeal} {
		page, err := s.opts.Audit.List(ctx, audit.Filter{Environment: env, Verb: verb, Limit: maxRecentAutoRuns})
		if err != nil {
			return nil, err
		}
		out = append(out, page.Records...)
	}
	slices.SortStableFunc(out, func(a, b audit.Record) int { return b.Time.Compare(a.Time) })
	return out[:min(len(out), maxRecentAutoRuns)], nil
}
