package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/revdiff"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// RecordReader reads one audit record with its manifests (implemented by
// *audit.Store).
type RecordReader interface {
	Get(ctx context.Context, id string) (audit.Record, error)
}

// envDiffTimeout bounds one environment diff: reading two records, or
// rendering a ref (a git fetch under the environment's own limits) and
// reading the live objects.
const envDiffTimeout = 2 * time.Minute

// Bounds of the environment diffs in progress, per user and in all: each
// may fetch a repository and read the environment's objects.
const (
	diffsPerUser = 2
	diffsTotal   = 4
)

// maxSideBytes bounds a from or to value (a record id, "live", "ref:REF").
const maxSideBytes = 253

// diffSides reads from and to of a diff request: the query's from and to,
// or ref (the "Compare to" box) as to=ref:REF with from live.
func diffSides(q url.Values) (from, to string) {
	from, to = strings.TrimSpace(q.Get("from")), strings.TrimSpace(q.Get("to"))
	if ref := strings.TrimSpace(q.Get("ref")); ref != "" && to == "" {
		to = "ref:" + ref
	}
	if from == "" && to != "" {
		from = "live"
	}
	return from, to
}

// envDiff compares from and to of env (each a record id, "live", and to
// also "ref:REF"). A mistake in from or to is a 400 whose Public text says
// what to give. The sides' commits (records' only) come back for the
// release notes.
func (s *Server) envDiff(ctx context.Context, env *envconfig.Environment, from, to string) (revdiff.Report, [2]string, error) {
	ctx, cancel := context.WithTimeout(ctx, envDiffTimeout)
	defer cancel()
	fs, err := s.diffSide(ctx, env, "from", from, false)
	if err != nil {
		return revdiff.Report{}, [2]string{}, err
	}
	ts, err := s.diffSide(ctx, env, "to", to, true)
	if err != nil {
		return revdiff.Report{}, [2]string{}, err
	}
	rep, err := s.compareSides(ctx, env, fs, ts)
	return rep, [2]string{fs.Commit, ts.Commit}, err
}

// compareSides diffs two resolved sides of env.
func (s *Server) compareSides(ctx context.Context, env *envconfig.Environment, fs, ts revdiff.Side) (revdiff.Report, error) {
	var err error
	var popts deployplan.Options
	if s.opts.EnvClusterConfig != nil && (fs.Live || ts.Live) {
		if popts.RestConfig, err = s.opts.EnvClusterConfig(env); err != nil {
			return revdiff.Report{}, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "the environment's cluster could not be resolved", Err: err}
		}
	}
	var managed map[string]bool
	if fs.Live || ts.Live {
		managed = s.lastAppliedKeys(ctx, env)
	}
	rep, err := revdiff.CompareEnvironment(ctx, env, popts, fs, ts, managed, revdiff.Options{})
	switch {
	case errors.Is(err, revdiff.ErrBothLive):
		return revdiff.Report{}, badRequest("from and to are both live: compare live with a record id or ref:REF")
	case err != nil:
		return revdiff.Report{}, &httpError{Status: http.StatusBadGateway, Reason: "DiffFailed", Public: "the diff could not be made: " + publicDiffError(err), Err: err}
	}
	return rep, nil
}

// lastAppliedKeys are the objects (deployplan.LiveKey, under the
// namespace rule) the environment's last applied record names: with the
// objects deploy-web's field manager owns, the live objects a diff shows
// values of. None when the history is not configured or cannot be read
// (then the field manager alone decides: fewer values, never more).
func (s *Server) lastAppliedKeys(ctx context.Context, env *envconfig.Environment) map[string]bool {
	if s.opts.Audit == nil || s.opts.RecordReader == nil {
		return nil
	}
	last, ok, err := audit.LastApplied(ctx, s.opts.Audit, env.Name)
	if err != nil || !ok {
		return nil
	}
	rec, err := s.opts.RecordReader.Get(ctx, last.ID)
	if err != nil || rec.Environment != env.Name {
		return nil
	}
	out := map[string]bool{}
	for _, o := range deployplan.WithNamespace(rec.Manifests, env.Namespace, deployplan.OfflineScope) {
		out[deployplan.LiveKey(o)] = true
	}
	return out
}

// publicDiffError is what a user may read of a failed diff: the public
// text of the typed error that explains it (a deployplan refusal of the
// source: a kustomization, a chart, a file too large or too complex, the
// catalog, a ref), cut to one line of at most 300 bytes; any other
// error's text (a cluster's, a fetch's) stays in the log.
func publicDiffError(err error) string {
	msg := strings.ReplaceAll(publicOf(err, "see the server log"), "\n", " ")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}

// diffSide resolves one side of a diff: "live", a record id of env, or
// (when refOK) "ref:REF".
func (s *Server) diffSide(ctx context.Context, env *envconfig.Environment, name, v string, refOK bool) (revdiff.Side, error) {
	switch {
	case v == "":
		return revdiff.Side{}, badRequest("%s is required: a record id, live%s", name, map[bool]string{true: " or ref:REF", false: ""}[refOK])
	case len(v) > maxSideBytes:
		return revdiff.Side{}, badRequest("%s is longer than %d bytes", name, maxSideBytes)
	case v == "live":
		return revdiff.LiveSide(), nil
	case strings.HasPrefix(v, "ref:"):
		if !refOK {
			return revdiff.Side{}, badRequest("%s cannot be a ref: a ref is rendered and compared with live (from=live&to=ref:REF)", name)
		}
		ref := strings.TrimPrefix(v, "ref:")
		if err := deployplan.ValidateRef(ref); err != nil {
			return revdiff.Side{}, badRequest("%s: %s", name, publicDiffError(err))
		}
		return revdiff.RefSide(ref), nil
	}
	if s.opts.RecordReader == nil {
		return revdiff.Side{}, &httpError{Status: http.StatusServiceUnavailable, Reason: "NoHistory", Public: "the change history is not configured: only live and refs can be compared"}
	}
	rec, err := s.opts.RecordReader.Get(ctx, v)
	if errors.Is(err, audit.ErrNotFound) || err == nil && rec.Environment != env.Name {
		return revdiff.Side{}, notFound("record " + strconv.Quote(v) + " of environment " + env.Name)
	}
	if err != nil {
		if errors.As(err, new(*audit.IDError)) { // audit's malformed id: the user's mistake
			return revdiff.Side{}, badRequest("%s: %q is not a record id, live or ref:REF", name, v)
		}
		return revdiff.Side{}, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read record " + v, Err: err}
	}
	if rec.Manifests == nil && rec.Chain != nil && !rec.Chain.OK {
		return revdiff.Side{}, &httpError{Status: http.StatusConflict, Reason: "RecordTampered",
			Public: fmt.Sprintf("record %s failed its chain check (%s): its manifests are not shown", v, rec.Chain.Reason)}
	}
	return revdiff.Side{Name: v, Objects: rec.Manifests, Commit: rec.Commit}, nil
}

// apiEnvDiff serves GET /v1/deploy/environments/{env}/diff?from=&to=.
func (s *Server) apiEnvDiff(w http.ResponseWriter, r *http.Request) error {
	env, err := s.pathEnv(r)
	if err != nil {
		return err
	}
	from, to := diffSides(r.URL.Query())
	rep, _, err := s.envDiff(r.Context(), env, from, to)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

// envDiffPage serves GET /environments/{env}/diff?from=&to=[&mode=]: the
// form alone without from and to, else the diff rendered server-side (a
// permalink; no JavaScript needed).
func (s *Server) envDiffPage(w http.ResponseWriter, r *http.Request) error {
	env, err := s.pathEnv(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	from, to := diffSides(q)
	p := templates.EnvDiffProps{Layout: s.layout(r, "envs", "Diff of "+env.Name), Env: env.Name, From: from, To: to, Mode: "split"}
	if q.Get("mode") == "unified" {
		p.Mode = "unified"
	}
	if from == "" && to == "" {
		return s.render(w, r, http.StatusOK, templates.EnvDiffPage(p))
	}
	rep, commits, err := s.envDiff(r.Context(), env, from, to)
	var he *httpError
	if errors.As(err, &he) && he.Status < 500 {
		p.Error = he.Public
		return s.render(w, r, he.Status, templates.EnvDiffPage(p))
	}
	if err != nil {
		return err
	}
	p.Diff = envDiffView(rep, p.Mode, paths.APIEnvDiff(env.Name, url.Values{"from": {from}, "to": {to}}))
	p.Diff.Notes = s.releaseNotes(r.Context(), env, commits[0], commits[1])
	return s.render(w, r, http.StatusOK, templates.EnvDiffPage(p))
}

// envDiffView turns a report into the page's props: each resource's hunks
// in the resource panel's diff markup, from on the left and to on the
// right.
func envDiffView(rep revdiff.Report, mode, jsonURL string) *templates.EnvDiffView {
	v := &templates.EnvDiffView{Commit: rep.Commit, Added: rep.Counts.Added, Changed: rep.Counts.Changed, Removed: rep.Counts.Removed,
		Unchanged: rep.Counts.Unchanged, Omitted: rep.Omitted, LinesCut: rep.LinesCut, Outside: rep.Outside, JSONURL: jsonURL}
	for i, o := range rep.Objects {
		res := templates.EnvDiffResource{Key: o.Key.String(), Anchor: "r" + strconv.Itoa(i+1), Status: string(o.Status), Summary: o.Summary,
			Secret: o.Secret, LinesCut: o.Resource.LinesCut, Error: o.Error}
		if !o.Secret && o.Error == "" {
			res.View = diffView(o.Hunks, rep.To, mode)
			res.View.Before = rep.From
			res.View.Added, res.View.Removed, res.View.Compact = o.Added, o.Removed, true
		}
		v.Resources = append(v.Resources, res)
	}
	return v
}

// apiDeploySub serves GET /v1/deploy/{name}/{sub}/{ref}: an App's
// resource when sub is "resource", else a 404. ServeMux refuses
// /v1/deploy/{name}/resource/{ref} beside the environments' routes
// (/v1/deploy/environments/{env}/diff: each pattern is the more specific
// in one segment), while this one, all wildcards, is less specific than
// every such route, which therefore takes its own URLs.
func (s *Server) apiDeploySub(w http.ResponseWriter, r *http.Request) error {
	if r.PathValue("sub") == "resource" {
		return s.apiResource(w, r)
	}
	return s.notFound(w, r)
}
