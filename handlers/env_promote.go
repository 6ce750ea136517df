package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/roles"
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

// promotionAsk is one promotion asked for: into target from source, of
// the Apps (one, or every App the source runs), each with its gates.
type promotionAsk struct {
	target, source *deployplan.Environment
	column         promotion.Column
	apps           []promotionApp
	decision       promotion.Decision
}

// promotionApp is one App of a promotion: its cell in the source and the
// target, and its gates.
type promotionApp struct {
	name           string
	source, target promotion.Cell
	gates          []promotion.Gate
}

// promoter is who asks, and what the roles said of them at the target.
type promoter struct {
	actor      audit.Actor
	mayPromote bool
	because    string
	// approver is set when an approver decides a stored request.
	approver *audit.Actor
}

// promoterOf is the request's person as a promoter of target.
func (s *Server) promoterOf(ctx context.Context, target string) promoter {
	d := s.grantsOf(ctx).Allow(roles.Promote, s.envTarget(target))
	return promoter{actor: auditActor(ctx), mayPromote: d.Allowed, because: d.Because}
}

// askPromotion evaluates a promotion of app (every App of source when "")
// from source into target for p: the environments must be in promotion
// order, and each App's gates are evaluated now.
func (s *Server) askPromotion(ctx context.Context, targetName, sourceName, app string, p promoter) (*promotionAsk, error) {
	er, err := s.envRunner()
	if err != nil {
		return nil, err
	}
	target, err := er.Config().Env(targetName)
	if err != nil {
		return nil, notFound("environment")
	}
	if sourceName == "" {
		sourceName = target.PromotedFrom()
	}
	if target.PromotedFrom() == "" {
		return nil, &httpError{Status: http.StatusConflict, Reason: "NotPromotable",
			Public: fmt.Sprintf("environment %s has no promotion.after: it is not promoted into (docs/promotion.md)", target.Name)}
	}
	if sourceName != target.PromotedFrom() {
		return nil, badRequest("from: %s is promoted from %s, not %q", target.Name, target.PromotedFrom(), sourceName)
	}
	source, err := er.Config().Env(sourceName)
	if err != nil {
		return nil, notFound("environment " + sourceName)
	}
	if !s.allowed(ctx, roles.View, s.envTarget(source.Name)) {
		return nil, notFound("environment " + sourceName)
	}
	scol, srows := s.envColumn(ctx, source)
	tcol, trows := s.envColumn(ctx, target)
	for _, c := range []promotion.Column{scol, tcol} {
		if c.Unavailable != "" {
			return nil, &httpError{Status: http.StatusConflict, Reason: "Unreadable", Public: fmt.Sprintf("environment %s: %s, so its versions cannot be promoted or compared", c.Env, c.Unavailable)}
		}
	}
	m := promotion.Build([]promotion.Column{scol, tcol}, map[string][]kubeview.AppRow{source.Name: srows, target.Name: trows})
	ask := &promotionAsk{target: target, source: source, column: tcol}
	freeze := s.freezeState(ctx, target.Name)
	now := s.opts.Now()
	for _, r := range m.Rows {
		if app != "" && r.App != app || app == "" && !r.Cells[0].Present {
			continue
		}
		a := promotionApp{name: r.App, source: r.Cells[0], target: r.Cells[1]}
		var history promotion.History
		if a.source.Present {
			history = s.soakHistory(ctx, scol, r.App, a.source, now.Add(-tcol.Soak), now)
		}
		a.gates = promotion.Gates(promotion.GateInput{Now: now, Source: a.source, SourceEnv: source.Name, Target: tcol, Freeze: freeze,
			MayPromote: p.mayPromote, Because: p.because, Requester: p.actor, Approver: p.approver, History: history})
		ask.apps = append(ask.apps, a)
	}
	if len(ask.apps) == 0 {
		what := "no App"
		if app != "" {
			what = "no App " + app
		}
		return nil, notFound(what + " in environment " + source.Name)
	}
	var all []promotion.Gate
	for _, a := range ask.apps {
		all = append(all, a.gates...)
	}
	ask.decision = promotion.Decide(all)
	return ask, nil
}

// freezeState asks the freezes (Options.Freezes, read fresh; nil: no
// freezes are configured) whether env is frozen now: the promotion's
// "target not frozen" gate.
func (s *Server) freezeState(ctx context.Context, env string) promotion.Freeze {
	if s.opts.Freezes == nil {
		return promotion.Freeze{}
	}
	fe, err := s.opts.Freezes.Status(ctx, s.freezeTarget(s.envTarget(env)))
	if err != nil || fe == nil {
		return promotion.Freeze{Configured: true, Err: err}
	}
	return promotion.Freeze{Configured: true, Frozen: true, Reason: fe.Freeze.Reason, Until: fe.OpensAt}
}

// versions are the exact versions the Apps of ask promote.
func (ask *promotionAsk) versions() []promotion.AppVersion {
	out := make([]promotion.AppVersion, 0, len(ask.apps))
	for _, a := range ask.apps {
		out = append(out, promotion.AppVersion{App: a.name, Image: a.source.Image, Version: a.source.Version, Digest: a.source.Digest})
	}
	return out
}

// refusal is the answer to a promotion a gate refused: the first gate
// not passed of each App, in their words.
func (ask *promotionAsk) refusal() *httpError {
	var msgs []string
	for _, a := range ask.apps {
		for _, g := range a.gates {
			if g.State == promotion.Failed {
				msgs = append(msgs, a.name+": "+g.Message)
				break
			}
		}
	}
	return &httpError{Status: http.StatusUnprocessableEntity, Reason: "PromotionRefused",
		Public: "promotion to " + ask.target.Name + " refused: " + strings.Join(msgs, "; ")}
}

// promotionOutcome is what a promotion did: a request stored, or a commit
// (and the plan it started).
type promotionOutcome struct {
	Decision promotion.Decision `json:"decision"`
	Target   string             `json:"target"`
	Source   string             `json:"source"`
	Apps     []promotionAppJSON `json:"apps"`
	Request  *promotion.Request `json:"request,omitempty"`
	Commit   *commitJSON        `json:"commit,omitempty"`
	Run      *runJSON           `json:"run,omitempty"`
	// RunError says why no plan was started after the commit.
	RunError string `json:"runError,omitempty"`
}

// promotionAppJSON is one App of a promotion in an answer.
type promotionAppJSON struct {
	App   string           `json:"app"`
	From  string           `json:"from"`
	To    string           `json:"to"`
	Image string           `json:"image"`
	Gates []promotion.Gate `json:"gates"`
}

func (ask *promotionAsk) outcome() promotionOutcome {
	o := promotionOutcome{Decision: ask.decision, Target: ask.target.Name, Source: ask.source.Name}
	for _, a := range ask.apps {
		o.Apps = append(o.Apps, promotionAppJSON{App: a.name, From: a.target.Version, To: a.source.Version, Image: a.source.Image, Gates: a.gates})
	}
	return o
}

// promote requests or performs a promotion for the request's person:
// refused by a failed gate (and recorded), stored as a request for a
// protected target, else written to the target's repository and planned.
func (s *Server) promote(ctx context.Context, target, source, app, reason string) (promotionOutcome, error) {
	p := s.promoterOf(ctx, target)
	ask, err := s.askPromotion(ctx, target, source, app, p)
	if err != nil {
		return promotionOutcome{}, err
	}
	out := ask.outcome()
	switch ask.decision {
	case promotion.Refuse:
		he := ask.refusal()
		s.recordPromotion(ctx, audit.VerbPromote, ask, p.actor, audit.OutcomeRefused, he.Public, "")
		return out, he
	case promotion.NeedsApproval:
		if s.opts.Promotions == nil {
			return out, &httpError{Status: http.StatusServiceUnavailable, Reason: "NoPromotionStore",
				Public: ask.target.Name + " is protected and the two-person rule's request store is not configured: nothing was requested"}
		}
		req, err := s.opts.Promotions.Create(ctx, promotion.Request{Target: ask.target.Name, Source: ask.source.Name, Apps: ask.versions(), Requester: p.actor, Reason: reason})
		if err != nil {
			return out, err
		}
		out.Request = &req
		s.recordPromotion(ctx, audit.VerbPromoteRequest, ask, p.actor, audit.OutcomeSucceeded, "request "+req.ID+": "+ask.summary(), "")
		return out, nil
	}
	id, _ := auth.FromContext(ctx)
	g, err := s.writePromotion(ctx, ask, id, reason, "")
	if err != nil {
		s.recordPromotion(ctx, audit.VerbPromote, ask, p.actor, audit.OutcomeFailed, publicOf(err), "")
		return out, err
	}
	out.Commit, out.Run, out.RunError = g.Commit, g.Run, g.RunError
	s.recordPromotion(ctx, audit.VerbPromote, ask, p.actor, audit.OutcomeSucceeded, ask.summary()+" on "+g.Commit.Branch, g.Commit.SHA)
	return out, nil
}

// decidePromotion approves or rejects request id of target for the
// request's person (an approver: the route's action). An approval
// re-evaluates every gate now, the requester's role as it was when they
// asked, and writes the review branch.
func (s *Server) decidePromotion(ctx context.Context, target, id string, approve bool) (promotionOutcome, error) {
	if s.opts.Promotions == nil {
		return promotionOutcome{}, &httpError{Status: http.StatusServiceUnavailable, Reason: "NoPromotionStore", Public: "the promotion request store is not configured"}
	}
	reqs, err := s.opts.Promotions.List(ctx, target)
	if err != nil {
		return promotionOutcome{}, err
	}
	var req *promotion.Request
	for i := range reqs {
		if reqs[i].ID == id {
			req = &reqs[i]
		}
	}
	if req == nil {
		return promotionOutcome{}, notFound("promotion request " + id + " of " + target)
	}
	me := auditActor(ctx)
	if promotion.SamePerson(req.Requester, me) {
		he := &httpError{Status: http.StatusForbidden, Reason: "SamePerson", Public: "you requested this promotion: another approver must decide it (two-person rule)"}
		s.appendDecision(ctx, *req, me, audit.OutcomeRefused, he.Public, "")
		return promotionOutcome{}, he
	}
	if !approve {
		// A rejection writes nothing: no gate, no read of the
		// environments (a source that cannot be read is no reason to
		// keep a request).
		out := promotionOutcome{Target: target, Source: req.Source}
		for _, v := range req.Apps {
			out.Apps = append(out.Apps, promotionAppJSON{App: v.App, To: v.Version, Image: v.Image})
		}
		got, err := s.opts.Promotions.Decide(ctx, target, id, promotion.StateRejected, me, nil)
		if err != nil {
			return out, decideError(err)
		}
		out.Request = &got
		s.appendDecision(ctx, got, me, audit.OutcomeSucceeded, "rejected", "")
		return out, nil
	}
	p := promoter{actor: req.Requester, mayPromote: true, approver: &me}
	app := ""
	if len(req.Apps) == 1 {
		app = req.Apps[0].App
	}
	ask, err := s.askPromotion(ctx, target, req.Source, app, p)
	if err != nil {
		return promotionOutcome{}, err
	}
	out := ask.outcome()
	if !slices.Equal(req.Apps, ask.versions()) {
		he := &httpError{Status: http.StatusConflict, Reason: "SourceMoved",
			Public: fmt.Sprintf("%s no longer runs the versions requested (%s): reject this request and ask again", req.Source, versionsText(req.Apps))}
		s.appendDecision(ctx, *req, me, audit.OutcomeRefused, he.Public, "")
		return out, he
	}
	if ask.decision != promotion.Perform {
		he := ask.refusal()
		s.appendDecision(ctx, *req, me, audit.OutcomeRefused, he.Public, "")
		return out, he
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
	id2, _ := auth.FromContext(ctx)
	g, err := s.writePromotion(ctx, ask, id2, req.Reason, req.ID)
	if err != nil {
		_ = s.opts.Promotions.Finish(ctx, target, id, promotion.StateFailed, "", "", "", publicOf(err))
		s.appendDecision(ctx, got, me, audit.OutcomeFailed, publicOf(err), "")
		return out, err
	}
	_ = s.opts.Promotions.Finish(ctx, target, id, promotion.StateApproved, g.Commit.Branch, g.Commit.CompareURL, g.Commit.SHA, "")
	got.Branch, got.CompareURL, got.Commit = g.Commit.Branch, g.Commit.CompareURL, g.Commit.SHA
	out.Request, out.Commit, out.Run, out.RunError = &got, g.Commit, g.Run, g.RunError
	s.appendDecision(ctx, got, me, audit.OutcomeSucceeded, "approved: "+versionsText(got.Apps)+" on "+g.Commit.Branch, g.Commit.SHA)
	return out, nil
}

// decideError maps the store's refusals of a decision.
func decideError(err error) error {
	var de *promotion.DecidedError
	switch {
	case errors.As(err, &de):
		return &httpError{Status: http.StatusConflict, Reason: "AlreadyDecided", Public: strings.TrimPrefix(de.Error(), "promotion: "), Err: err}
	case errors.Is(err, promotion.ErrNotFound):
		return notFound("promotion request")
	}
	return err
}

// publicOf is an error's text a user may read: an *httpError's Public,
// else a fixed sentence.
func publicOf(err error) string {
	var he *httpError
	if errors.As(err, &he) && he.Public != "" {
		return he.Public
	}
	return "the promotion failed: see the server log"
}

func versionsText(vs []promotion.AppVersion) string {
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
func (ask *promotionAsk) summary() string {
	return ask.source.Name + " -> " + ask.target.Name + ": " + versionsText(ask.versions())
}

// recordPromotion writes the audit record of a promotion (or its request)
// by who.
func (s *Server) recordPromotion(ctx context.Context, verb audit.Verb, ask *promotionAsk, who audit.Actor, outcome audit.Outcome, msg, commit string) {
	rec := audit.Record{Time: s.opts.Now(), Actor: who, Verb: verb, Cluster: ask.column.Cluster, Environment: ask.target.Name,
		Namespace: ask.target.Namespace, Commit: commit, Outcome: outcome, Message: msg, Blockers: []string{}}
	if len(ask.apps) == 1 {
		rec.App = ask.apps[0].name
	}
	for _, a := range ask.apps {
		if c := s.envCluster(ask.target); c != nil {
			rec.Objects = append(rec.Objects, audit.Object{Group: c.AppGroup, Kind: c.AppKind, Namespace: ask.target.Namespace, Name: a.name})
		}
	}
	appendRecord(ctx, s.opts.Audit, rec)
}

// appendDecision writes the audit record of an approval or rejection of
// req by who (refused: its reason).
func (s *Server) appendDecision(ctx context.Context, req promotion.Request, who audit.Actor, outcome audit.Outcome, msg, commit string) {
	verb := audit.VerbPromoteApprove
	if req.State == promotion.StateRejected {
		verb = audit.VerbPromoteReject
	}
	cluster := ""
	if er, err := s.envRunner(); err == nil {
		if e, err := er.Config().Env(req.Target); err == nil {
			if c := s.envCluster(e); c != nil {
				cluster = c.Name
			}
		}
	}
	rec := audit.Record{Time: s.opts.Now(), Actor: who, Verb: verb, Cluster: cluster, Environment: req.Target,
		Commit: commit, Outcome: outcome, Message: "request " + req.ID + " of " + actorText(req.Requester) + ": " + msg, Blockers: []string{}}
	if len(req.Apps) == 1 {
		rec.App = req.Apps[0].App
	}
	appendRecord(ctx, s.opts.Audit, rec)
}

func actorText(a audit.Actor) string {
	if a.Email != "" {
		return a.Email
	}
	return a.Subject
}

// writePromotion commits the exact versions of ask's Apps to the target's
// repository in one commit (the review branch of a protected target or
// of writeBack.mode branch), then, when the commit is on the target's
// own branch, starts a plan of the target.
func (s *Server) writePromotion(ctx context.Context, ask *promotionAsk, id auth.Identity, reason, requestID string) (gitOutcome, error) {
	env := ask.target
	path := decideWrite(env)
	if path == writeRefused {
		return gitOutcome{}, &httpError{Status: http.StatusConflict, Reason: "NoWriteBack",
			Public: "environment " + env.Name + " has no writeBack: configure it (docs/gitops.md) so a promotion can commit to its repository; nothing was written"}
	}
	c := s.envCluster(env)
	if c == nil {
		return gitOutcome{}, &httpError{Status: http.StatusConflict, Reason: "Unreadable", Public: "environment " + env.Name + "'s cluster is not one deploy-web reads"}
	}
	branch, err := env.WriteBackBranch()
	if err != nil {
		return gitOutcome{}, &httpError{Status: http.StatusConflict, Reason: "NoWriteBack", Public: "environment " + env.Name + ": " + err.Error()}
	}
	tok, err := env.WriteBackToken()
	if err != nil {
		return gitOutcome{}, &httpError{Status: http.StatusBadGateway, Reason: "WriteBackCredentials",
			Public: "deploy-web could not read the write-back credentials of environment " + env.Name + ": see the server log; nothing was committed", Err: err}
	}
	versions := ask.versions()
	var changes []writeback.ImageChange
	for _, v := range versions {
		ref := appcr.ParseImageRef(v.Image)
		if ref.Tag == "" && ref.Digest == "" {
			return gitOutcome{}, &httpError{Status: http.StatusUnprocessableEntity, Reason: "EditError",
				Public: fmt.Sprintf("%s declares %s without a tag or digest (%q): there is no exact version to promote", ask.source.Name, v.App, v.Image)}
		}
		changes = append(changes, writeback.ImageChange{Dir: env.Source.Path, Kind: c.AppKind, Name: v.App, Repository: ref.Repository, Tag: ref.Tag, Digest: ref.Digest})
	}
	app, version := ask.source.Name, "all"
	if len(versions) == 1 {
		app, version = versions[0].App, versions[0].Version
	}
	if requestID != "" {
		version += "-" + requestID
	}
	from := make([]string, 0, len(ask.apps))
	for _, a := range ask.apps {
		from = append(from, textfmt.OrDash(a.target.Version))
	}
	maxFile := env.WriteBackLimits().MaxFileBytes
	var hookErr error
	req := writeback.Request{
		RepoURL: env.Source.Repo, Branch: branch, Mode: env.WriteBack.Mode, Auth: tok,
		Author:  env.WriteBack.Author.Render(writeback.Actor{Name: id.Name, Email: id.Email, Subject: id.Subject}),
		Message: writeback.Message("promote", ask.source.Name+" -> "+env.Name+" "+app, strings.Join(from, ","), versionsText(versions), id.Email, id.Subject, reason),
		Plan: func(tree fs.FS) ([]writeback.Edit, error) {
			var edits []writeback.Edit
			for _, ch := range changes {
				e, err := writeback.Locate(tree, ch, maxFile)
				if err != nil {
					hookErr = &locateError{err}
					return nil, hookErr
				}
				if err := ownFolderOnly(env, ch.Name, e); err != nil {
					hookErr = err
					return nil, err
				}
				edits = append(edits, e...)
			}
			source := func() (*deployplan.Catalog, string, error) {
				return readSourceCatalog(ctx, ask.source, env.Source.Repo, branch, tree)
			}
			cat, err := promotionCatalogEdits(tree, env, ask.source.Name, versions, source)
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
				if err := checkRenderedObjs(env, objs, c.AppGroup, c.AppKind, ch.Name, want); err != nil {
					hookErr = err
					return err
				}
			}
			return nil
		},
		Action: "promote", App: app, Version: version,
		Limits: env.WriteBackLimits(),
	}
	wres, err := s.commitThroughGit(ctx, env.Name, req, &hookErr)
	if err != nil {
		return gitOutcome{}, err
	}
	out := gitOutcome{Environment: env.Name, Commit: commitOf(wres)}
	if path != writeCommitApply {
		return out, nil // a review branch: the target's branch is unchanged, nothing to plan
	}
	run, err := s.opts.Environments.StartAs(auditActor(ctx), env.Name, envrun.ActionPlan, auditName(id), "", "")
	var ref *deployplan.RefusalError
	switch {
	case errors.Is(err, envrun.ErrBusy):
		out.RunError = "the commit is pushed, but a plan or apply of " + env.Name + " is already running: plan it from the environment page once that run ends"
	case errors.As(err, &ref):
		out.RunError = "the commit is pushed, but the plan was refused: " + ref.Reason
	case err != nil:
		return out, err
	default:
		out.Run = runOf(run)
	}
	return out, nil
}

// promoteBody is the JSON of POST /v1/deploy/environments/{env}/promotions.
type promoteBody struct {
	From   string `json:"from"`
	App    string `json:"app"`
	Reason string `json:"reason"`
}

// readPromote reads the body (JSON, or the dialog's form).
func readPromote(r *http.Request) (promoteBody, error) {
	var b promoteBody
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			return b, badRequest("body: want {\"from\": \"ENV\", \"app\": \"NAME\", \"reason\": \"...\"} (app: one App, or every App of from when empty; from and reason optional)")
		}
		if dec.Decode(&struct{}{}) != io.EOF {
			return b, badRequest("body: want one JSON object")
		}
	} else {
		if err := r.ParseForm(); err != nil {
			return b, badRequest("body: unreadable form")
		}
		b = promoteBody{From: r.PostForm.Get("from"), App: r.PostForm.Get("app"), Reason: r.PostForm.Get("reason")}
	}
	if len(b.Reason) > promotion.MaxReasonBytes {
		return b, badRequest("reason: at most %d bytes", promotion.MaxReasonBytes)
	}
	return b, nil
}

// promotionStatus is the status of a promotion's answer.
func promotionStatus(o promotionOutcome) int {
	if o.Request != nil && o.Request.State == promotion.StatePending {
		return http.StatusAccepted
	}
	return http.StatusOK
}

// apiPromote serves POST /v1/deploy/environments/{env}/promotions: a
// request (protected target: 202 with the request) or the promotion
// itself (200 with the commit and the plan).
func (s *Server) apiPromote(w http.ResponseWriter, r *http.Request) error {
	b, err := readPromote(r)
	if err != nil {
		return err
	}
	out, err := s.promote(r.Context(), r.PathValue("env"), b.From, b.App, b.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, promotionStatus(out), out)
	return nil
}

// apiPromotionApprove serves POST
// /v1/deploy/environments/{env}/promotions/{id}/approve.
func (s *Server) apiPromotionApprove(w http.ResponseWriter, r *http.Request) error {
	out, err := s.decidePromotion(r.Context(), r.PathValue("env"), r.PathValue("id"), true)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// apiPromotionReject serves POST
// /v1/deploy/environments/{env}/promotions/{id}/reject.
func (s *Server) apiPromotionReject(w http.ResponseWriter, r *http.Request) error {
	out, err := s.decidePromotion(r.Context(), r.PathValue("env"), r.PathValue("id"), false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// sharedFileError is a promotion whose edit would change a file outside
// the target's own folder (a base every environment renders).
type sharedFileError struct{ msg string }

func (e *sharedFileError) Error() string { return e.msg }

// ownFolderOnly refuses edits of a promotion outside env's kustomize
// folder: the App's version declared in a file other environments render
// too (base/) would move them all, the source included. Locate edits the
// folder's images: entry when it reaches spec.image; otherwise the App's
// own file, wherever it is.
func ownFolderOnly(env *deployplan.Environment, app string, edits []writeback.Edit) error {
	dir := strings.TrimSuffix(path.Clean(strings.TrimPrefix(env.Source.Path, "./")), "/") + "/"
	for _, e := range edits {
		if !strings.HasPrefix(path.Clean(e.Target()), dir) {
			return &sharedFileError{fmt.Sprintf("the version of %s is declared in %s, outside %s (environment %s's folder), so a promotion would move every environment that renders it: "+
				"give %s an images: entry for the App's image with a configurations: file that maps images to spec/image (docs/promotion.md); nothing was pushed",
				app, e.Target(), dir, env.Name, dir)}
		}
	}
	return nil
}
