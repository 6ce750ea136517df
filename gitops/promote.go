package gitops

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/promcheck"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/writeback"
)

// PromotionStore keeps the two-person rule's requests (implemented by
// *promotion.Store).
type PromotionStore interface {
	List(ctx context.Context, target string) ([]promotion.Request, error)
	Create(ctx context.Context, r promotion.Request) (promotion.Request, error)
	Decide(ctx context.Context, target, id string, state promotion.RequestState, decider audit.Actor, check func(promotion.Request) error) (promotion.Request, error)
	Finish(ctx context.Context, target, id string, state promotion.RequestState, branch, compareURL, commit, message string) error
}

// PromotionView is what a promotion's gates read from the clusters, the
// timeline, the freezes and the roles (the handlers implement it over
// their caches).
type PromotionView interface {
	// Column is environment e as a column of the matrix, with its Apps.
	Column(ctx context.Context, e *envconfig.Environment) (promotion.Column, []kubeview.AppRow)
	// SoakHistory is App app's record in the source column col over the
	// soak window [since, now] (cur its cell now).
	SoakHistory(ctx context.Context, col promotion.Column, app string, cur promotion.Cell, since, now time.Time) promotion.History
	// FreezeState says whether environment env is frozen now.
	FreezeState(ctx context.Context, env string) promotion.Freeze
	// MayView reports whether the caller of ctx may view environment env.
	MayView(ctx context.Context, env string) bool
	// AppResource is the cluster environment e deploys to, and its App
	// resource's group and kind (ok false: not a cluster deploy-web reads).
	AppResource(e *envconfig.Environment) (cluster, group, kind string, ok bool)
}

// MetricChecks evaluates one promotion check against an environment's
// metrics (implemented by *promcheck.Evaluator).
type MetricChecks interface {
	Evaluate(ctx context.Context, m envconfig.Metrics, c envconfig.Check, v promcheck.Vars, wentLive time.Time, fresh bool) promcheck.Result
	// Trend is a check's query over the last day, for the app page's
	// chart (checks.go).
	Trend(ctx context.Context, m envconfig.Metrics, c envconfig.Check, v promcheck.Vars) promcheck.Trend
}

// Ask is one promotion asked for: into Target from Source, of the Apps
// (one, or every App the source runs), each with its gates evaluated now,
// and the decision they make.
type Ask struct {
	Target, Source *envconfig.Environment
	Column         promotion.Column
	Apps           []AskedApp
	Decision       promotion.Decision
}

// AskedApp is one App of a promotion: its cell in the source and the
// target, and its gates.
type AskedApp struct {
	Name           string
	Source, Target promotion.Cell
	Gates          []promotion.Gate
	// Checks are the promotion checks' results the checks gate decided
	// on, in the file's order (none when the target has no checks).
	Checks []promcheck.Result
}

// PromoteRequest is a promotion of App (every App of Source when "") from
// Source (Target's promotion.after when "") into Target, by Who, whom the
// roles let promote into Target or not (MayPromote, Because).
type PromoteRequest struct {
	Target, Source, App string
	Reason              string
	Who                 Person
	MayPromote          bool
	Because             string
}

// promoter is who asks, and what the roles said of them at the target.
type promoter struct {
	actor      audit.Actor
	mayPromote bool
	because    string
	// approver is set when an approver decides a stored request.
	approver *audit.Actor
	// soakOnly asks for the soak gate alone to be meaningful: the
	// promotion checks are not evaluated (Soaking).
	soakOnly bool
}

// PromotionOutcome is what a promotion did: a request stored, or a commit
// (and the plan it started).
type PromotionOutcome struct {
	Decision promotion.Decision `json:"decision"`
	Target   string             `json:"target"`
	Source   string             `json:"source"`
	Apps     []PromotionApp     `json:"apps"`
	Request  *promotion.Request `json:"request,omitempty"`
	Commit   *Commit            `json:"commit,omitempty"`
	// Run is the plan the commit started (the handlers link it).
	Run *envrun.Run `json:"-"`
	// RunError says why no plan was started after the commit.
	RunError string `json:"runError,omitempty"`
}

// PromotionApp is one App of a promotion in an answer.
type PromotionApp struct {
	App   string           `json:"app"`
	From  string           `json:"from"`
	To    string           `json:"to"`
	Image string           `json:"image"`
	Gates []promotion.Gate `json:"gates"`
}

func (s *Service) runner() (Runner, error) {
	if s.opts.Runs == nil {
		return nil, refuse(KindNotFound, "NoEnvironments", "no environments are configured (start deploy-web with --environments)")
	}
	return s.opts.Runs, nil
}

func notFound(what string) *Error {
	return refuse(KindNotFound, "NotFound", "%s not found", what)
}

// Gates evaluates the promotion req asks for, without writing anything:
// the promotion dialog's gates and button.
func (s *Service) Gates(ctx context.Context, req PromoteRequest) (*Ask, error) {
	return s.ask(ctx, req.Target, req.Source, req.App, promoter{actor: req.Who.Actor, mayPromote: req.MayPromote, because: req.Because})
}

// ask evaluates a promotion of app (every App of source when "") from
// source into target for p: the environments must be in promotion order,
// and each App's gates are evaluated now.
func (s *Service) ask(ctx context.Context, targetName, sourceName, app string, p promoter) (*Ask, error) {
	er, err := s.runner()
	if err != nil {
		return nil, err
	}
	if s.opts.View == nil {
		return nil, refuse(KindConflict, "Unreadable", "the Apps of the environments are not read: promotions are off")
	}
	target, err := er.Config().Env(targetName)
	if err != nil {
		return nil, notFound("environment")
	}
	if sourceName == "" {
		sourceName = target.PromotedFrom()
	}
	if target.PromotedFrom() == "" {
		return nil, refuse(KindConflict, "NotPromotable", "environment %s has no promotion.after: it is not promoted into (docs/promotion.md)", target.Name)
	}
	if sourceName != target.PromotedFrom() {
		return nil, refuse(KindInvalid, "BadRequest", "from: %s is promoted from %s, not %q", target.Name, target.PromotedFrom(), sourceName)
	}
	source, err := er.Config().Env(sourceName)
	if err != nil {
		return nil, notFound("environment " + sourceName)
	}
	v := s.opts.View
	if !v.MayView(ctx, source.Name) {
		return nil, notFound("environment " + sourceName)
	}
	scol, srows := v.Column(ctx, source)
	tcol, trows := v.Column(ctx, target)
	for _, c := range []promotion.Column{scol, tcol} {
		if c.Unavailable != "" {
			return nil, refuse(KindConflict, "Unreadable", "environment %s: %s, so its versions cannot be promoted or compared", c.Env, c.Unavailable)
		}
	}
	m := promotion.Build([]promotion.Column{scol, tcol}, map[string][]kubeview.AppRow{source.Name: srows, target.Name: trows})
	ask := &Ask{Target: target, Source: source, Column: tcol}
	freeze := v.FreezeState(ctx, target.Name)
	now := s.opts.Now()
	for _, r := range m.Rows {
		if app != "" && r.App != app || app == "" && !r.Cells[0].Present {
			continue
		}
		a := AskedApp{Name: r.App, Source: r.Cells[0], Target: r.Cells[1]}
		var history promotion.History
		if a.Source.Present {
			history = v.SoakHistory(ctx, scol, r.App, a.Source, now.Add(-tcol.Soak), now)
		}
		var checks promotion.Checks
		if !p.soakOnly {
			checks, a.Checks = s.checks(ctx, target, source, r.App, a.Source, p.approver != nil)
		}
		a.Gates = promotion.Gates(promotion.GateInput{Now: now, Source: a.Source, SourceEnv: source.Name, Target: tcol, Freeze: freeze,
			MayPromote: p.mayPromote, Because: p.because, Requester: p.actor, Approver: p.approver, History: history,
			Checks: checks})
		ask.Apps = append(ask.Apps, a)
	}
	if len(ask.Apps) == 0 {
		what := "no App"
		if app != "" {
			what = "no App " + app
		}
		return nil, notFound(what + " in environment " + source.Name)
	}
	var all []promotion.Gate
	for _, a := range ask.Apps {
		all = append(all, a.Gates...)
	}
	ask.Decision = promotion.Decide(all)
	return ask, nil
}

// checks evaluates target's promotion checks for App app against
// source's metrics, app's version there and the time it went live. A
// source that does not run the App gets no results (the gate fails
// closed, beside the soak gate saying why). fresh (an approval) skips the
// per-minute cache. It answers the gate's input and the results it was
// made of (which the matrix and the app page show).
func (s *Service) checks(ctx context.Context, target, source *envconfig.Environment, app string, cur promotion.Cell, fresh bool) (promotion.Checks, []promcheck.Result) {
	cs := target.Promotion.Checks
	if len(cs) == 0 {
		return promotion.Checks{}, nil
	}
	out := promotion.Checks{Configured: true}
	if !cur.Present || source.Metrics == nil {
		return out, nil
	}
	v := checkVars(source, app, cur.Version)
	var rs []promcheck.Result
	for _, c := range cs {
		r := s.opts.Checks.Evaluate(ctx, *source.Metrics, c, v, cur.DeployedAt, fresh)
		rs = append(rs, r)
		out.Results = append(out.Results, promotion.CheckResult{Name: c.Name, Held: r.State() == promcheck.StateHeld, Message: r.Message()})
	}
	return out, rs
}

// checkVars are the placeholders' values of App app at version in
// environment e.
func checkVars(e *envconfig.Environment, app, version string) promcheck.Vars {
	return promcheck.Vars{App: app, Namespace: e.Namespace, Environment: e.Name, Version: version}
}

// versions are the exact versions the Apps of ask promote.
func (ask *Ask) versions() []promotion.AppVersion {
	out := make([]promotion.AppVersion, 0, len(ask.Apps))
	for _, a := range ask.Apps {
		out = append(out, promotion.AppVersion{App: a.Name, Image: a.Source.Image, Version: a.Source.Version, Digest: a.Source.Digest})
	}
	return out
}

// failedGates are the blocker ids of the gates that failed, per App
// (promotion.GateBlocker), for the record of a refusal: the delivery
// metrics count a failed promotion check from them.
func (ask *Ask) failedGates() []string {
	out := []string{}
	for _, a := range ask.Apps {
		for _, g := range a.Gates {
			if g.State == promotion.Failed {
				out = append(out, promotion.GateBlocker(g.ID, a.Name))
			}
		}
	}
	return out
}

// refusal is the answer to a promotion a gate refused: the first gate
// not passed of each App, in their words.
func (ask *Ask) refusal() *Error {
	var msgs []string
	for _, a := range ask.Apps {
		for _, g := range a.Gates {
			if g.State == promotion.Failed {
				msgs = append(msgs, a.Name+": "+g.Message)
				break
			}
		}
	}
	return &Error{Kind: KindUnprocessable, Reason: "PromotionRefused",
		Public: "promotion to " + ask.Target.Name + " refused: " + strings.Join(msgs, "; ")}
}

func (ask *Ask) outcome() PromotionOutcome {
	o := PromotionOutcome{Decision: ask.Decision, Target: ask.Target.Name, Source: ask.Source.Name}
	for _, a := range ask.Apps {
		o.Apps = append(o.Apps, PromotionApp{App: a.Name, From: a.Target.Version, To: a.Source.Version, Image: a.Source.Image, Gates: a.Gates})
	}
	return o
}

// Promote requests or performs a promotion: refused by a failed gate (and
// recorded), stored as a request for a protected target, else written to
// the target's repository and planned.
func (s *Service) Promote(ctx context.Context, req PromoteRequest) (PromotionOutcome, error) {
	p := promoter{actor: req.Who.Actor, mayPromote: req.MayPromote, because: req.Because}
	ask, err := s.ask(ctx, req.Target, req.Source, req.App, p)
	if err != nil {
		return PromotionOutcome{}, err
	}
	out := ask.outcome()
	switch ask.Decision {
	case promotion.Refuse:
		e := ask.refusal()
		s.recordPromotion(ctx, audit.VerbPromote, ask, p.actor, audit.OutcomeRefused, e.Public, "")
		return out, e
	case promotion.NeedsApproval:
		if s.opts.Promotions == nil {
			return out, refuse(KindUnavailable, "NoPromotionStore", "%s is protected and the two-person rule's request store is not configured: nothing was requested", ask.Target.Name)
		}
		stored, err := s.opts.Promotions.Create(ctx, promotion.Request{Target: ask.Target.Name, Source: ask.Source.Name, Apps: ask.versions(), Requester: p.actor, Reason: req.Reason})
		if err != nil {
			return out, requestLimitError(err)
		}
		out.Request = &stored
		s.recordPromotion(ctx, audit.VerbPromoteRequest, ask, p.actor, audit.OutcomeSucceeded, "request "+stored.ID+": "+ask.summary(), "")
		return out, nil
	}
	g, err := s.writePromotion(ctx, ask, req.Who, nil, req.Reason, "")
	if err != nil {
		s.recordPromotion(ctx, audit.VerbPromote, ask, p.actor, audit.OutcomeFailed, PublicOf(err, promotionFailed), "")
		return out, err
	}
	out.Commit, out.Run, out.RunError = g.Commit, g.Run, g.RunError
	s.recordPromotion(ctx, audit.VerbPromote, ask, p.actor, audit.OutcomeSucceeded, ask.summary()+" on "+g.Commit.Branch, g.Commit.SHA)
	return out, nil
}

// promotionFailed is the public text of a promotion that failed for a
// reason the server log holds.
const promotionFailed = "the promotion failed: see the server log"

// DecideRequest is an approval (Approve) or rejection of the stored
// promotion request ID of Target by Who, an approver (the route's role).
type DecideRequest struct {
	Target, ID string
	Approve    bool
	Who        Person
}

// Decide approves or rejects a stored promotion request. An approval
// re-evaluates every gate now, the requester's role as it was when they
// asked, and writes the target's repository.
func (s *Service) Decide(ctx context.Context, req DecideRequest) (PromotionOutcome, error) {
	target, id, me := req.Target, req.ID, req.Who.Actor
	if s.opts.Promotions == nil {
		return PromotionOutcome{}, refuse(KindUnavailable, "NoPromotionStore", "the promotion request store is not configured")
	}
	reqs, err := s.opts.Promotions.List(ctx, target)
	if err != nil {
		return PromotionOutcome{}, err
	}
	var stored *promotion.Request
	for i := range reqs {
		if reqs[i].ID == id {
			stored = &reqs[i]
		}
	}
	if stored == nil {
		return PromotionOutcome{}, notFound("promotion request " + id + " of " + target)
	}
	if promotion.SamePerson(stored.Requester, me) {
		e := refuse(KindForbidden, "SamePerson", "you requested this promotion: another approver must decide it (two-person rule)")
		s.recordDecision(ctx, *stored, me, audit.OutcomeRefused, e.Public, "")
		return PromotionOutcome{}, e
	}
	if !req.Approve {
		// A rejection writes nothing: no gate, no read of the
		// environments (a source that cannot be read is no reason to
		// keep a request).
		out := PromotionOutcome{Target: target, Source: stored.Source}
		for _, v := range stored.Apps {
			out.Apps = append(out.Apps, PromotionApp{App: v.App, To: v.Version, Image: v.Image})
		}
		got, err := s.opts.Promotions.Decide(ctx, target, id, promotion.StateRejected, me, nil)
		if err != nil {
			return out, decideError(err)
		}
		out.Request = &got
		s.recordDecision(ctx, got, me, audit.OutcomeSucceeded, "rejected", "")
		return out, nil
	}
	p := promoter{actor: stored.Requester, mayPromote: true, approver: &me}
	app := ""
	if len(stored.Apps) == 1 {
		app = stored.Apps[0].App
	}
	ask, err := s.ask(ctx, target, stored.Source, app, p)
	if err != nil {
		return PromotionOutcome{}, err
	}
	out := ask.outcome()
	if !slices.Equal(stored.Apps, ask.versions()) {
		e := refuse(KindConflict, "SourceMoved", "%s no longer runs the versions requested (%s): reject this request and ask again", stored.Source, VersionsText(stored.Apps))
		s.recordDecision(ctx, *stored, me, audit.OutcomeRefused, e.Public, "")
		return out, e
	}
	if ask.Decision != promotion.Perform {
		e := ask.refusal()
		s.recordDecision(ctx, *stored, me, audit.OutcomeRefused, e.Public, "", ask.failedGates()...)
		return out, e
	}
	got, err := s.opts.Promotions.Decide(ctx, target, id, promotion.StateApproved, me, func(r promotion.Request) error {
		if promotion.SamePerson(r.Requester, me) {
			return errors.New("the requester cannot approve")
		}
		return nil
	})
	if err != nil {
		return out, decideError(err)
	}
	g, err := s.writePromotion(ctx, ask, req.Who, &stored.Requester, stored.Reason, stored.ID)
	if err != nil {
		_ = s.opts.Promotions.Finish(ctx, target, id, promotion.StateFailed, "", "", "", PublicOf(err, promotionFailed))
		s.recordDecision(ctx, got, me, audit.OutcomeFailed, PublicOf(err, promotionFailed), "")
		return out, err
	}
	_ = s.opts.Promotions.Finish(ctx, target, id, promotion.StateApproved, g.Commit.Branch, g.Commit.CompareURL, g.Commit.SHA, "")
	got.Branch, got.CompareURL, got.Commit = g.Commit.Branch, g.Commit.CompareURL, g.Commit.SHA
	out.Request, out.Commit, out.Run, out.RunError = &got, g.Commit, g.Run, g.RunError
	s.recordDecision(ctx, got, me, audit.OutcomeSucceeded, "approved: "+VersionsText(got.Apps)+" on "+g.Commit.Branch, g.Commit.SHA)
	return out, nil
}

// decideError maps the store's refusals of a decision.
func decideError(err error) error {
	var de *promotion.DecidedError
	switch {
	case errors.As(err, &de):
		return &Error{Kind: KindConflict, Reason: "AlreadyDecided", Public: de.Public(), Err: err}
	case errors.Is(err, promotion.ErrNotFound):
		return notFound("promotion request")
	}
	return err
}

// VersionsText is promoted versions in one line: "api 1.5.0, web 2.0.0@sha256:abc".
func VersionsText(vs []promotion.AppVersion) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.App + " " + v.Version
		if v.Digest != "" {
			parts[i] += "@" + textfmt.ShortDigest(v.Digest)
		}
	}
	return strings.Join(parts, ", ")
}

// summary is the promotion in one line: "staging -> prod: api 1.5.0".
func (ask *Ask) summary() string {
	return ask.Source.Name + " -> " + ask.Target.Name + ": " + VersionsText(ask.versions())
}

// recordPromotion writes the audit record of a promotion (or its request)
// by who.
func (s *Service) recordPromotion(ctx context.Context, verb audit.Verb, ask *Ask, who audit.Actor, outcome audit.Outcome, msg, commit string) {
	rec := audit.Record{Time: s.opts.Now(), Actor: who, Verb: verb, Cluster: ask.Column.Cluster, Environment: ask.Target.Name,
		Namespace: ask.Target.Namespace, Commit: commit, Outcome: outcome, Message: msg, Blockers: []string{}}
	if len(ask.Apps) == 1 {
		rec.App = ask.Apps[0].Name
	}
	if outcome == audit.OutcomeRefused {
		rec.Blockers = ask.failedGates()
	}
	for _, a := range ask.Apps {
		if _, group, kind, ok := s.opts.View.AppResource(ask.Target); ok {
			rec.Objects = append(rec.Objects, audit.Object{Group: group, Kind: kind, Namespace: ask.Target.Namespace, Name: a.Name})
		}
	}
	s.record(ctx, rec)
}

// recordDecision writes the audit record of an approval or rejection of
// req by who (refused: its reason).
func (s *Service) recordDecision(ctx context.Context, req promotion.Request, who audit.Actor, outcome audit.Outcome, msg, commit string, blockers ...string) {
	verb := audit.VerbPromoteApprove
	if req.State == promotion.StateRejected {
		verb = audit.VerbPromoteReject
	}
	cluster := ""
	if s.opts.Runs != nil && s.opts.View != nil {
		if e, err := s.opts.Runs.Config().Env(req.Target); err == nil {
			cluster, _, _, _ = s.opts.View.AppResource(e)
		}
	}
	rec := audit.Record{Time: s.opts.Now(), Actor: who, Verb: verb, Cluster: cluster, Environment: req.Target,
		Commit: commit, Outcome: outcome, Message: "request " + req.ID + " of " + ActorText(req.Requester) + ": " + msg, Blockers: append([]string{}, blockers...)}
	if len(req.Apps) == 1 {
		rec.App = req.Apps[0].App
	}
	s.record(ctx, rec)
}

// ActorText is a person in a line: their email, else their subject.
func ActorText(a audit.Actor) string {
	if a.Email != "" {
		return a.Email
	}
	return a.Subject
}

// promotionWrite is what a promotion's write did: the commit, and the
// plan it started (nil: RunError says why, or a review branch).
type promotionWrite struct {
	Commit   *Commit
	Run      *envrun.Run
	RunError string
}

// writePromotion commits the exact versions of ask's Apps to the target's
// repository in one commit (the review branch of a protected target or
// of writeBack.mode branch), by who (and requester, who asked, when an
// approver writes a stored request), then, when the commit is on the
// target's own branch, starts a plan of the target.
func (s *Service) writePromotion(ctx context.Context, ask *Ask, who Person, requester *audit.Actor, reason, requestID string) (promotionWrite, error) {
	env := ask.Target
	wpath := DecideWrite(env)
	if wpath == WriteRefused {
		return promotionWrite{}, refuse(KindConflict, "NoWriteBack",
			"environment %s has no writeBack: configure it (docs/gitops.md) so a promotion can commit to its repository; nothing was written", env.Name)
	}
	_, group, kind, ok := s.opts.View.AppResource(env)
	if !ok {
		return promotionWrite{}, refuse(KindConflict, "Unreadable", "environment %s's cluster is not one deploy-web reads", env.Name)
	}
	branch, tok, err := credentials(env)
	if err != nil {
		return promotionWrite{}, err
	}
	versions := ask.versions()
	var changes []writeback.ImageChange
	for _, v := range versions {
		ref := appcr.ParseImageRef(v.Image)
		if ref.Tag == "" && ref.Digest == "" {
			return promotionWrite{}, refuse(KindUnprocessable, "EditError", "%s declares %s without a tag or digest (%q): there is no exact version to promote", ask.Source.Name, v.App, v.Image)
		}
		changes = append(changes, writeback.ImageChange{Dir: env.Source.Path, Kind: kind, Name: v.App, Repository: ref.Repository, Tag: ref.Tag, Digest: ref.Digest})
	}
	app, version := ask.Source.Name, "all"
	if len(versions) == 1 {
		app, version = versions[0].App, versions[0].Version
	}
	if requestID != "" {
		version += "-" + requestID
	}
	from := make([]string, 0, len(ask.Apps))
	for _, a := range ask.Apps {
		from = append(from, textfmt.OrDash(a.Target.Version))
	}
	maxFile := writeback.EnvLimits(env).MaxFileBytes
	var hookErr error
	req := writeback.Request{
		RepoURL: env.Source.Repo, Branch: branch, Mode: env.WriteBack.Mode, Auth: tok,
		Author:  writeback.RenderAuthor(env.WriteBack.Author, who.Actor),
		Message: writeback.Message("promote", ask.Source.Name+" -> "+env.Name+" "+app, strings.Join(from, ","), VersionsText(versions), who.Actor, reason),
		Plan: func(tree fs.FS) ([]writeback.Edit, error) {
			var edits []writeback.Edit
			for _, ch := range changes {
				e, err := versionEdits(ctx, tree, env, group, ch, maxFile)
				if err != nil {
					hookErr = err
					return nil, err
				}
				edits = append(edits, e...)
			}
			source := func() (*deployplan.Catalog, string, error) {
				return readSourceCatalog(ctx, ask.Source, env.Source.Repo, branch, tree)
			}
			cat, err := promotionCatalogEdits(tree, env, ask.Source.Name, versions, source)
			if err != nil {
				hookErr = err
				return nil, err
			}
			return append(edits, cat...), nil
		},
		Check: func(ctx context.Context, tree fs.FS) error {
			// One render of the edited tree for every App it moves.
			objs, err := renderEdited(ctx, env, tree)
			if err != nil {
				hookErr = err
				return err
			}
			for _, ch := range changes {
				want := appcr.ImageRef{Repository: ch.Repository, Tag: ch.Tag, Digest: ch.Digest}
				if err := checkRenderedObjs(env, objs, group, kind, ch.Name, want); err != nil {
					hookErr = err
					return err
				}
			}
			return nil
		},
		Action: "promote", App: app, Version: version,
		Limits: writeback.EnvLimits(env),
	}
	if requester != nil {
		// The two people of the two-person rule, both in the commit.
		req.Detail = func() []string {
			return []string{"Requested by " + requester.String() + " in request " + requestID + "; approved by " + who.Actor.String() + "."}
		}
	}
	s.confine(ctx, env, &req, &hookErr)
	wres, err := s.commit(ctx, env.Name, req, &hookErr)
	if err != nil {
		return promotionWrite{}, err
	}
	out := promotionWrite{Commit: commitOf(wres)}
	if wpath != WriteCommitApply {
		return out, nil // a review branch: the target's branch is unchanged, nothing to plan
	}
	run, err := s.opts.Runs.StartAs(who.Actor, env.Name, envrun.ActionPlan, who.Actor.String(), "", "")
	var ref *deployplan.RefusalError
	switch {
	case errors.Is(err, envrun.ErrBusy):
		out.RunError = "the commit is pushed, but a plan or apply of " + env.Name + " is already running: plan it from the environment page once that run ends"
	case errors.As(err, &ref):
		out.RunError = "the commit is pushed, but the plan was refused: " + ref.Reason
	case err != nil:
		return out, err
	default:
		out.Run = run
	}
	return out, nil
}
