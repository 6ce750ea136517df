package gitops

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/promcheck"
	"github.com/hanzoai/deploy-web/writeback"
)

// Committer writes a change to a manifest repository (writeback.Commit;
// tests give an in-memory one).
type Committer func(ctx context.Context, req writeback.Request) (writeback.Result, error)

// Runner is the environments' engine (implemented by *envrun.Runner): the
// configuration, and the runs a write starts.
type Runner interface {
	Config() *envconfig.Config
	Deploy(env string, d envrun.DeployRequest) (*envrun.Run, error)
	StartAs(who audit.Actor, env, action, user, confirm, planID string) (*envrun.Run, error)
}

// FreezeGate refuses writes to frozen targets (implemented by freeze.Gate).
type FreezeGate interface {
	Check(ctx context.Context, a freeze.Action, t freeze.Target, bg *freeze.BreakGlass) (*freeze.Override, error)
}

// AuditLog stores the audit records of the workflows (implemented by
// *audit.Store).
type AuditLog interface {
	Append(ctx context.Context, r audit.Record) (audit.Record, error)
}

// Pauser is the auto-sync loop's pauses (implemented by autosync's state).
type Pauser interface {
	Pause(ctx context.Context, env, reason string, until time.Time, by string) (autosync.Pause, error)
	Resume(ctx context.Context, env, by string) (autosync.Pause, error)
}

// Options are the Service's collaborators; each may be nil where the
// workflow that needs it says what happens then.
type Options struct {
	// Commit writes to a repository (default writeback.Commit).
	Commit Committer
	// Runs plans and applies environments (nil: no write through git).
	Runs Runner
	// Freezes refuses writes to frozen targets (nil: no freezes).
	Freezes FreezeGate
	// Promotions keeps the two-person rule's requests (nil: a promotion
	// into a protected environment is refused).
	Promotions PromotionStore
	// View reads what a promotion's gates need from the clusters and the
	// timeline (nil: promotions are refused as unreadable).
	View PromotionView
	// Records reads the audit records an environment rollback goes back
	// to (nil: environment rollbacks are refused).
	Records RecordReader
	// Audit records promotions and pauses (nil: not recorded).
	Audit AuditLog
	// AutoSync pauses and resumes the auto-sync loop (nil: nothing to
	// pause).
	AutoSync Pauser
	// Checks evaluates promotion checks against the source's metrics
	// (default: a promcheck.Evaluator on Now, tokens from the process
	// environment).
	Checks MetricChecks
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Service runs the workflows that write to an environment's repository
// or state: rollback and sync through git, promotion, catalog moves and
// auto-sync pauses. Each takes a typed request and answers a typed result
// or an *Error (or a release or freeze refusal, which keep their types).
type Service struct {
	opts Options
}

// New returns the Service over o.
func New(o Options) *Service {
	if o.Commit == nil {
		o.Commit = writeback.Commit
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Checks == nil {
		o.Checks = promcheck.New(promcheck.Options{Now: o.Now, Getenv: os.Getenv})
	}
	return &Service{opts: o}
}

// auditWriteTimeout bounds the write of one audit record; it runs after
// the workflow's own work, detached from its cancellation.
const auditWriteTimeout = 5 * time.Second

// record stores rec; a failure is logged by the store and does not change
// the answer (the write it records is done).
func (s *Service) record(ctx context.Context, rec audit.Record) {
	if s.opts.Audit == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditWriteTimeout)
	defer cancel()
	_, _ = s.opts.Audit.Append(ctx, rec)
}

// Person is who asks for a workflow: the one type for who acted
// (actor.Actor), as the audit records name them, with the display name a
// commit's author takes (Actor.Name).
type Person struct {
	Actor audit.Actor
}

// Commit is a write-back commit in an answer.
type Commit struct {
	SHA        string `json:"sha"`
	Short      string `json:"short"`
	Message    string `json:"message"`
	Branch     string `json:"branch"`
	CompareURL string `json:"compareURL,omitempty"`
	NoChange   bool   `json:"noChange"`
}

func commitOf(res writeback.Result) *Commit {
	return &Commit{SHA: res.SHA, Short: textfmt.ShortSHA(res.SHA), Message: res.Message, Branch: res.Branch, CompareURL: res.CompareURL, NoChange: res.NoChange}
}

// commit runs one write-back of environment env. A refusal of the
// request's Plan or Check hook, which they keep in *hookErr, is answered
// in its own words (writeback.Commit returns its own typed errors only,
// redacted); any failure is mapped by writeBackError.
func (s *Service) commit(ctx context.Context, env string, req writeback.Request, hookErr *error) (writeback.Result, error) {
	wres, err := s.opts.Commit(ctx, req)
	if err != nil {
		if *hookErr != nil {
			err = *hookErr
		}
		return wres, writeBackError(env, err)
	}
	return wres, nil
}

// credentials are the branch and token of env's write-back, or the
// refusal.
func credentials(env *envconfig.Environment) (string, writeback.Token, error) {
	branch, err := env.WriteBackBranch()
	if err != nil {
		var fe *envconfig.FieldError
		public := "environment " + env.Name + ": its writeBack is not usable"
		if errors.As(err, &fe) {
			public = "environment " + env.Name + ": " + fe.Field + ": " + fe.Public()
		}
		return "", writeback.Token{}, &Error{Kind: KindConflict, Reason: "NoWriteBack", Public: public, Err: err}
	}
	tok, err := writeback.EnvToken(env)
	if err != nil {
		return "", writeback.Token{}, &Error{Kind: KindUpstream, Reason: "WriteBackCredentials", Err: err,
			Public: "deploy-web could not read the write-back credentials of environment " + env.Name + ": see the server log; nothing was committed"}
	}
	return branch, tok, nil
}
