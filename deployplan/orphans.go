package deployplan

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hanzoai/deploy-web/envconfig"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Orphan results after an apply with prune.
const (
	OrphanDeleted = "deleted"
	OrphanGone    = "gone"
	OrphanKept    = "kept"
	OrphanFailed  = "failed"
)

// Orphan is an object of the environment's namespace that an earlier
// apply wrote (it carries deploy-web's server-side apply field manager and
// this environment's EnvironmentAnnotation, or no marker at all) and the
// current render no longer holds. Only a marked one that is not a
// PersistentVolumeClaim may be pruned.
type Orphan struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	Hint       string `json:"hint"`
	// Result is set by an apply with --prune: deleted, gone (already
	// deleted), kept (it changed since the plan) or failed.
	Result  string `json:"result,omitempty"`
	Message string `json:"message,omitempty"`
	// prunable: it carries this environment's marker, so --prune may
	// delete it (pruneOne checks again on the live object).
	prunable bool
}

// EnvironmentAnnotation is stamped by every apply (and its dry-run) on
// every object it sends, with the environment's name: environments that
// share a namespace share the field manager too, so the marker is what
// tells whose object it is. An annotation, not a label: selectors and
// label queries stay as the manifests wrote them.
const EnvironmentAnnotation = "deploy-web.hanzo.ai/environment"

// withEnvironment returns a copy of u carrying EnvironmentAnnotation env
// (replacing any value the manifest wrote).
func withEnvironment(u *unstructured.Unstructured, env string) *unstructured.Unstructured {
	c := u.DeepCopy()
	ann := c.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[EnvironmentAnnotation] = env
	c.SetAnnotations(ann)
	return c
}

// orphanKinds are the kinds an apply may prune: the namespaced kinds the
// engine writes (deploy/base/rbac.yaml, deploy-web-apply). Never Secrets
// (their metadata is not listed), Leases, or anything cluster-scoped.
var orphanKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "batch", Version: "v1", Resource: "cronjobs"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
	{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"},
	{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	{Group: "hanzo.ai", Version: "v1", Resource: "apps"},
}

// appliedByEngine reports whether deploy-web server-side applied the object.
func appliedByEngine(mfs []metav1.ManagedFieldsEntry) bool {
	for _, mf := range mfs {
		if mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// findOrphans lists, per kind of orphanKinds, the objects of ns applied by
// deploy-web, with this environment's marker or none (another
// environment's are skipped), that rendered does not hold (matched by group, kind and
// name). Objects being deleted and reserved names are skipped; a kind the
// cluster does not serve is skipped, one it may not list is a warning.
func (c *clients) findOrphans(ctx context.Context, env *envconfig.Environment, rendered []*unstructured.Unstructured, opts Options) ([]Orphan, []string) {
	want := map[string]bool{}
	for _, o := range rendered {
		want[o.GroupVersionKind().Group+"/"+o.GetKind()+"/"+o.GetName()] = true
	}
	var out []Orphan
	var warnings []string
	for _, gvr := range orphanKinds {
		list, err := c.meta.Resource(gvr).Namespace(env.Namespace).List(ctx, metav1.ListOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("orphans: could not list %s in %s: %s", gvr.Resource, env.Namespace, shortErr(err)))
			continue
		}
		for i := range list.Items {
			m := &list.Items[i]
			if m.DeletionTimestamp != nil || !appliedByEngine(m.ManagedFields) {
				continue
			}
			marker, marked := m.Annotations[EnvironmentAnnotation]
			if marked && marker != env.Name {
				continue // another environment's object
			}
			kind := m.Kind
			if kind == "" || kind == "PartialObjectMetadata" {
				kind = kindOf(gvr)
			}
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetAPIVersion(gvr.GroupVersion().String())
			u.SetKind(kind)
			u.SetName(m.Name)
			u.SetNamespace(m.Namespace)
			u.SetLabels(m.Labels)
			if want[gvr.Group+"/"+kind+"/"+m.Name] || ReservedName(u) != "" {
				continue
			}
			o := Orphan{APIVersion: u.GetAPIVersion(), Kind: kind, Name: m.Name, UID: string(m.UID), prunable: marked && kind != "PersistentVolumeClaim"}
			del := fmt.Sprintf("%s -n %s delete %s/%s", kubectlPrefix(env, opts.Kubeconfig), env.Namespace, lower(kind), m.Name)
			switch {
			case kind == "PersistentVolumeClaim":
				o.Hint = fmt.Sprintf("applied by deploy-web earlier, no longer rendered: a PersistentVolumeClaim holds data, so --prune never deletes it; once its data is safe, delete it by hand: %s", del)
			case marked:
				o.Hint = fmt.Sprintf("applied by deploy-web earlier for environment %s, no longer rendered: delete it with --prune on the next apply, or %s", env.Name, del)
			default:
				o.Hint = fmt.Sprintf("applied by deploy-web before environment markers (no %s annotation), no longer rendered: it may belong to another environment of this namespace, so --prune never deletes it; if it is %s's, %s",
					EnvironmentAnnotation, env.Name, del)
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, warnings
}

// kindOf names the kind of one of orphanKinds.
func kindOf(gvr schema.GroupVersionResource) string {
	return map[string]string{
		"configmaps": "ConfigMap", "services": "Service", "serviceaccounts": "ServiceAccount",
		"persistentvolumeclaims": "PersistentVolumeClaim", "deployments": "Deployment", "statefulsets": "StatefulSet",
		"daemonsets": "DaemonSet", "jobs": "Job", "cronjobs": "CronJob", "ingresses": "Ingress",
		"horizontalpodautoscalers": "HorizontalPodAutoscaler", "poddisruptionbudgets": "PodDisruptionBudget", "apps": "App",
	}[gvr.Resource]
}

// orphanObject is the identity of an orphan as an object (for the capture
// and the client's mapping).
func orphanObject(o Orphan, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(o.APIVersion)
	u.SetKind(o.Kind)
	u.SetName(o.Name)
	u.SetNamespace(ns)
	return u
}

// pruneOne deletes one orphan if it is still the object the plan saw (same
// uid, still applied by deploy-web): the deletion carries the uid as a
// precondition. It returns the result and a message.
func (c *clients) pruneOne(ctx context.Context, o Orphan, env *envconfig.Environment) (string, string) {
	ns := env.Namespace
	u := orphanObject(o, ns)
	ri, gvr, err := c.resource(u)
	if err != nil {
		return OrphanFailed, shortErr(err)
	}
	cur, err := c.meta.Resource(gvr).Namespace(ns).Get(ctx, o.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return OrphanGone, "already deleted"
	case err != nil:
		return OrphanFailed, shortErr(err)
	case string(cur.UID) != o.UID:
		return OrphanKept, "re-created since the plan (another uid): not deleted"
	case !appliedByEngine(cur.ManagedFields):
		return OrphanKept, "no longer applied by deploy-web: not deleted"
	case cur.Annotations[EnvironmentAnnotation] != env.Name:
		return OrphanKept, fmt.Sprintf("no %s annotation of %s (applied before environment markers, or another environment's): never deleted by --prune, delete it by hand if it must go", EnvironmentAnnotation, env.Name)
	}
	uid := types.UID(o.UID)
	bg := metav1.DeletePropagationBackground
	err = ri.Delete(ctx, o.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &bg})
	switch {
	case apierrors.IsNotFound(err):
		return OrphanGone, "already deleted"
	case apierrors.IsConflict(err):
		return OrphanKept, "re-created since the plan (another uid): not deleted"
	case err != nil:
		return OrphanFailed, shortErr(err)
	}
	return OrphanDeleted, ""
}

// prune deletes the plan's orphans under the lock, each after a guard,
// recording every result in the report. It returns a failure message when
// an orphan could not be deleted, and the guard's error when the apply
// must stop.
func (ps *planState) prune(ctx context.Context, env *envconfig.Environment, opts ApplyOptions) (string, error) {
	d := &ps.report.DeployApply
	var failed []string
	for _, i := range pruneOrder(d.Orphans) { // the apply's kind order, reversed
		o := &d.Orphans[i]
		if o.Kind == "PersistentVolumeClaim" {
			o.Result, o.Message = OrphanKept, "a PersistentVolumeClaim holds data: never deleted by --prune, delete it by hand once its data is safe"
			continue
		}
		if !o.prunable {
			o.Result, o.Message = OrphanKept, fmt.Sprintf("no %s annotation of %s (applied before environment markers): never deleted by --prune, delete it by hand if it must go", EnvironmentAnnotation, env.Name)
			continue
		}
		if err := ps.guard(ctx, opts, "delete orphan "+o.Kind+"/"+o.Name); err != nil {
			return "", err
		}
		opts.progress("prune orphan %s/%s", o.Kind, o.Name)
		o.Result, o.Message = ps.cl.pruneOne(ctx, *o, env)
		if o.Result == OrphanFailed {
			failed = append(failed, fmt.Sprintf("%s/%s (%s)", o.Kind, o.Name, o.Message))
		}
		if err := ps.report.WriteFile(opts.ReportPath); err != nil {
			opts.progress("warning: %v", err)
		}
	}
	if len(failed) > 0 {
		return fmt.Sprintf("pruning failed for %d orphan(s): %s", len(failed), strings.Join(failed, "; ")), nil
	}
	return "", nil
}

// MaxPruneObjects is the most orphans a prune deletes without PruneMany.
const MaxPruneObjects = 20

// checkPruneCount refuses a prune that would delete more than
// MaxPruneObjects objects, or more than half of the environment's objects
// (rendered, the objects it applies, plus the orphans it would delete): a
// render that lost most of its objects (a wrong path, an empty overlay)
// must not empty the namespace.
func checkPruneCount(orphans []Orphan, rendered int) error {
	n := 0
	for _, o := range orphans {
		if o.prunable {
			n++
		}
	}
	if n > MaxPruneObjects || (n > 0 && 2*n > n+rendered) {
		return &RefusalError{Reason: fmt.Sprintf("--prune would delete %d object(s) of the environment's %d (more than %d, or more than half): check the render, then add --prune-many if that is meant; nothing was touched", n, n+rendered, MaxPruneObjects)}
	}
	return nil
}

// SharedNamespace names the other environments of cfg that write the same
// namespace of the same cluster as env: their objects carry the same field
// manager, so a prune is refused. The environment marker already keeps a
// prune to its own objects; this stays as a second guard (objects applied
// before the markers carry none).
func SharedNamespace(cfg *envconfig.Config, env *envconfig.Environment) []string {
	var out []string
	for i := range cfg.Environments {
		o := &cfg.Environments[i]
		if o.Name != env.Name && o.Namespace == env.Namespace && o.Cluster == env.Cluster {
			out = append(out, o.Name)
		}
	}
	sort.Strings(out)
	return out
}
