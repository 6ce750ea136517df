package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// Day-2 actions on the resource panel: restart, scale, suspend, resume,
// delete a pod (release.Operate). A request goes:
//
//  1. authorize: roles.Operate at the App (the route table);
//  2. the object: a ref of the App's tree, as the tree emits it (anything
//     else, another App's object included, is the 404 of every resource);
//  3. decideOperate: the kind, the replicas, the reason, and self-heal;
//  4. the cluster's Operations: the freezes (freezingOperator, refused as a
//     rollback is, break-glass as there), the audit record
//     (auditingOperator), then the write seam.

// operationLabels are the buttons' words.
var operationLabels = map[release.Op]string{
	release.OpRestart: "Restart", release.OpScale: "Scale", release.OpSuspend: "Suspend",
	release.OpResume: "Resume", release.OpDelete: "Delete pod",
}

// operationDetails say what each action does, on its confirmation.
var operationDetails = map[release.Op]string{
	release.OpRestart: "Every pod is replaced, a few at a time, as kubectl rollout restart does (the pod template's restartedAt annotation).",
	release.OpScale:   "The replica count changes through the scale subresource.",
	release.OpSuspend: "The CronJob starts no new Jobs until it is resumed; running Jobs go on.",
	release.OpResume:  "The CronJob starts Jobs on its schedule again.",
	release.OpDelete:  "The pod is deleted; its controller starts a new one.",
}

// selfHeal is whether an App's environment heals it from git now: Env
// renders it with autoSync.selfHeal on, and Paused says its auto-sync is
// paused.
type selfHeal struct {
	Env        string
	On, Paused bool
}

// decideOperate is the decision on a day-2 action once the person may
// operate (authorize) and the object is in the App's tree: the action
// applies to the kind, the replicas and the reason are within bounds
// (release.CheckOperation), and a scale of an App an environment heals
// from git is refused unless its auto-sync is paused (self-heal would put
// the replicas back). A restart is no drift, so it is allowed. The
// freezes are decided at the write seam (freezingOperator).
func decideOperate(o release.Operation, sh selfHeal) error {
	if err := release.CheckOperation(o); err != nil {
		return err
	}
	if o.Op == release.OpScale && sh.On && !sh.Paused {
		return &httpError{Status: http.StatusUnprocessableEntity, Reason: "SelfHeal", Public: fmt.Sprintf(
			"environment %s renders %s from git with self-heal: self-heal would put the replicas back; pause its auto-sync first, or change the replicas in git", sh.Env, o.App)}
	}
	return nil
}

// selfHealOf reads whether App a is healed from git now: the environment
// that renders it (renderedBy), its autoSync.selfHeal, and whether its
// auto-sync is paused. A pause that cannot be read is an error (a scale
// is then refused: fail closed).
func (s *Server) selfHealOf(ctx context.Context, a appRef) (selfHeal, error) {
	g := s.renderedBy(a)
	if g == nil || g.env.AutoSync == nil || !g.env.AutoSync.Enabled || !g.env.AutoSync.SelfHeal.On {
		return selfHeal{}, nil
	}
	sh := selfHeal{Env: g.env.Name, On: true}
	if s.opts.AutoSync == nil {
		return sh, nil
	}
	st, ok, err := s.opts.AutoSync.Status(ctx, g.env.Name)
	if err != nil {
		return sh, &httpError{Status: http.StatusServiceUnavailable, Reason: "AutoSyncUnreadable", Public: "could not read whether environment " + g.env.Name + "'s auto-sync is paused: try again", Err: err}
	}
	sh.Paused = ok && st.Paused
	return sh, nil
}

// operationTarget finds ref in App a's tree (the one check of ownership:
// a ref of anything else is resourceNotFound) and names it for the write
// seam.
func operationTarget(a appRef, ref kubeview.Ref) (release.Target, kubeview.TreeNode, error) {
	tree, err := a.c.View.Tree(a.Namespace, a.Name)
	if errors.Is(err, kubeview.ErrAppNotFound) {
		return release.Target{}, kubeview.TreeNode{}, resourceNotFound()
	}
	if err != nil {
		return release.Target{}, kubeview.TreeNode{}, err
	}
	for _, n := range tree.Nodes {
		if n.Ref != ref.String() {
			continue
		}
		t := release.Target{Group: n.Group, Version: n.Version, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name, UID: n.UID}
		if n.Group == a.c.AppGroup && n.Kind == a.c.AppKind {
			if n.Namespace != a.Namespace || n.Name != a.Name {
				return release.Target{}, kubeview.TreeNode{}, resourceNotFound()
			}
			t.App = true
			return t, n, nil
		}
		k, ok := kubeview.LookupKind(n.Group, n.Kind)
		if !ok {
			return release.Target{}, kubeview.TreeNode{}, resourceNotFound()
		}
		t.Version, t.Resource = k.Version, k.Resource
		return t, n, nil
	}
	return release.Target{}, kubeview.TreeNode{}, resourceNotFound()
}

// operationBody is the body of an action: {"replicas": N, "reason": "...",
// "breakGlass": {"reason": "..."}} (JSON, each optional but replicas for a
// scale; an empty body is none) or replicas=&reason=&breakGlassReason=
// (form).
type operationBody struct {
	Replicas   *int            `json:"replicas"`
	Reason     string          `json:"reason"`
	BreakGlass *breakGlassJSON `json:"breakGlass"`
}

// readOperationBody reads an action's body (operationBody) and returns its
// replicas (nil when absent), reason and break-glass reason.
func readOperationBody(r *http.Request) (replicas *int, reason, breakGlass string, err error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/json" {
		var b operationBody
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		switch err := dec.Decode(&b); {
		case err == io.EOF:
			return nil, "", "", nil
		case err != nil || dec.Decode(&struct{}{}) != io.EOF:
			return nil, "", "", badRequest("body: want {\"replicas\": N, \"reason\": \"...\", \"breakGlass\": {\"reason\": \"...\"}} (each optional but replicas for a scale)")
		}
		if b.BreakGlass != nil {
			breakGlass = b.BreakGlass.Reason
		}
		return b.Replicas, b.Reason, breakGlass, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, "", "", badRequest("body: unreadable form")
	}
	if v, ok := r.PostForm["replicas"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || len(v) != 1 {
			return nil, "", "", badRequest("replicas: want a whole number from 0 to %d", release.MaxReplicas)
		}
		replicas = &n
	}
	return replicas, r.PostForm.Get("reason"), r.PostForm.Get(breakGlassField), nil
}

// operationRequest is an action asked for, resolved and read.
type operationRequest struct {
	app appRef
	ops Operator
	op  release.Operation
}

// readOperation resolves an action's App, object and body and decides it
// (decideOperate). jsonAPI says the App comes from /v1/deploy/{name}
// (?cluster= ?namespace=, the ref's namespace as the hint). A refusal
// after authentication is recorded (auditRefusal), as for every write;
// the request returned carries the break-glass (withBreakGlass).
func (s *Server) readOperation(r *http.Request, jsonAPI bool) (_ *http.Request, req operationRequest, err error) {
	defer func() {
		if err != nil {
			s.auditRefusal(r, "operate", err)
		}
	}()
	ref, err := s.parseRef(r.PathValue("ref"))
	if err != nil {
		return r, req, err
	}
	hint := ""
	if jsonAPI {
		hint = ref.Namespace
	}
	if req.app, err = s.resolveApp(r, hint); err != nil {
		return r, req, err
	}
	if req.app.c.Operations == nil {
		return r, req, &httpError{Status: http.StatusServiceUnavailable, Reason: "ReadOnly", Public: "this deploy-web is read-only: day-2 actions are not configured"}
	}
	req.ops = req.app.c.Operations
	target, _, err := operationTarget(req.app, ref)
	if err != nil {
		return r, req, err
	}
	replicas, reason, breakGlass, err := readOperationBody(r)
	if err != nil {
		return r, req, err
	}
	op := release.Op(r.PathValue("action"))
	switch {
	case op != release.OpScale && replicas != nil:
		return r, req, badRequest("replicas: only a scale takes replicas")
	case op == release.OpScale && replicas == nil:
		return r, req, badRequest("replicas: missing: want a whole number from 0 to %d", release.MaxReplicas)
	}
	req.op = release.Operation{Op: op, App: req.app.Name, Target: target, Reason: reason}
	if replicas != nil {
		req.op.Replicas = *replicas
	}
	sh, err := s.selfHealOf(r.Context(), req.app)
	if err != nil {
		return r, req, err
	}
	if err := decideOperate(req.op, sh); err != nil {
		return r, req, releaseError(err)
	}
	return r.WithContext(s.withBreakGlass(r.Context(), s.appTarget(req.app), breakGlass)), req, nil
}

// operationResponse is the JSON of an action.
type operationResponse struct {
	Cluster string `json:"cluster"`
	App     string `json:"app"`
	release.OperationResult
}

// apiOperate serves POST /v1/deploy/{name}/resource/{ref}/actions/{action}
// (through apiDeployAction).
func (s *Server) apiOperate(w http.ResponseWriter, r *http.Request) error {
	r, req, err := s.readOperation(r, true)
	if err != nil {
		return err
	}
	res, err := req.ops.Operate(r.Context(), req.op, actor(r))
	if err != nil {
		return releaseError(err)
	}
	writeJSON(w, http.StatusOK, operationResponse{Cluster: req.app.Cluster(), App: req.app.Name, OperationResult: res})
	return nil
}

// apiDeployAction serves POST /v1/deploy/{name}/{sub}/{ref}/{verb}/{action}:
// a day-2 action when sub is "resource" and verb "actions", else a 404.
// ServeMux refuses /v1/deploy/{name}/resource/{ref}/actions/{action}
// beside the promotions' routes (each pattern is the more specific in one
// segment), as apiDeploySub says.
func (s *Server) apiDeployAction(w http.ResponseWriter, r *http.Request) error {
	if r.PathValue("sub") == "resource" && r.PathValue("verb") == "actions" {
		return s.apiOperate(w, r)
	}
	return s.notFound(w, r)
}

// appOperate serves POST
// /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}/actions/{action}
// (the panel's form): the result line in #panel-operation.
func (s *Server) appOperate(w http.ResponseWriter, r *http.Request) error {
	view := templates.OperationProps{AppCluster: r.PathValue("cluster"), AppNamespace: r.PathValue("namespace"), AppName: r.PathValue("name"), Ref: r.PathValue("ref"),
		Op: r.PathValue("action"), Label: operationLabels[release.Op(r.PathValue("action"))]}
	r, req, err := s.readOperation(r, false)
	if err == nil {
		var res release.OperationResult
		if res, err = req.ops.Operate(r.Context(), req.op, actor(r)); err == nil {
			view.Kind, view.Message = "success", operationText(req.op, res)+"."
			if !res.Changed {
				view.Kind = "info"
			}
			return s.render(w, r, http.StatusOK, templates.OperationView(view))
		}
		err = releaseError(err)
	}
	var he *httpError
	if errors.As(err, &he) && he.Status < 500 && he.Status != http.StatusNotFound {
		// A refusal: shown in place of the confirmation (htmx swaps 409
		// and 422).
		view.Kind, view.Error = "error", he.Public
		return s.render(w, r, actionStatus(he.Status), templates.OperationView(view))
	}
	return err
}

// appOperateConfirm serves GET
// /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}/actions/{action}:
// the confirmation, with the scale's current replicas and the freeze's
// break-glass field.
func (s *Server) appOperateConfirm(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	ref, err := s.parseRef(r.PathValue("ref"))
	if err != nil {
		return err
	}
	target, node, err := operationTarget(a, ref)
	if err != nil {
		return err
	}
	op := release.Op(r.PathValue("action"))
	o := release.Operation{Op: op, App: a.Name, Target: target}
	if err := release.CheckOperation(o); err != nil {
		return releaseError(err)
	}
	view := templates.OperationProps{AppCluster: a.Cluster(), AppNamespace: a.Namespace, AppName: a.Name, Ref: node.Ref, Op: string(op), Label: operationLabels[op],
		Object: node.Kind + " " + node.Name, Kind: "confirm", Detail: operationDetails[op], CSRF: auth.CSRFToken(r.Context()), Freeze: s.breakGlassState(r.Context(), s.appTarget(a))}
	if op == release.OpScale {
		obj, _, err := a.c.View.Object(r.Context(), a.Namespace, a.Name, ref)
		if err != nil {
			return &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read the object from the cluster", Err: err}
		}
		view.Replicas = specReplicas(obj)
		sh, err := s.selfHealOf(r.Context(), a)
		if err != nil {
			return err
		}
		if err := decideOperate(release.Operation{Op: op, App: a.Name, Target: target, Replicas: view.Replicas}, sh); err != nil {
			var he *httpError
			if errors.As(err, &he) {
				view.Kind, view.Error = "error", he.Public
			}
		}
	}
	return s.render(w, r, http.StatusOK, templates.OperationView(view))
}

// specReplicas is an object's spec.replicas (1 when unset, the API's
// default).
func specReplicas(obj *unstructured.Unstructured) int {
	n, ok, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !ok {
		return 1
	}
	return int(n)
}

// panelOperations are the day-2 actions the person may take on a panel's
// object: the ones that apply to its kind, when roles.Operate allows
// them at the App (none otherwise, and none without a write seam).
func (s *Server) panelOperations(ctx context.Context, a appRef, ref kubeview.Ref) []templates.PanelOperation {
	if a.c.Operations == nil || !s.allowed(ctx, roles.Operate, s.appTarget(a)) {
		return nil
	}
	target, node, err := operationTarget(a, ref)
	if err != nil {
		return nil
	}
	var out []templates.PanelOperation
	for _, op := range release.OpsFor(target) {
		out = append(out, templates.PanelOperation{Op: string(op), Label: operationLabels[op],
			ConfirmURL: paths.AppResourceAction(a.Cluster(), a.Namespace, a.Name, node.Ref, string(op))})
	}
	return out
}
