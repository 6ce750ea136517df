package deployplan

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hanzoai/deploy-web/envconfig"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fieldConflict is one field a server-side apply found owned by another
// manager (a cause of the API server's 409).
type fieldConflict struct {
	Field   string // ".spec.replicas"
	Manager string // "kubectl-edit"
	// Update is set when the manager wrote with an update (kubectl edit,
	// patch, scale, set, client-side apply), not a server-side apply.
	Update bool
}

// fieldConflicts reads the conflicts of a 409 from a server-side apply:
// each cause of type FieldManagerConflict says `conflict with "<manager>"`,
// followed by " using <apiVersion>" for an update.
func fieldConflicts(err error) []fieldConflict {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return nil
	}
	var out []fieldConflict
	for _, c := range st.Status().Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		fc := fieldConflict{Field: c.Field, Manager: "another manager"}
		if _, rest, ok := strings.Cut(c.Message, `"`); ok {
			if m, tail, ok := strings.Cut(rest, `"`); ok {
				fc.Manager, fc.Update = m, strings.Contains(tail, " using ")
			}
		}
		out = append(out, fc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Manager+out[i].Field < out[j].Manager+out[j].Field })
	return out
}

// conflictBlocker is the blocker of an object whose apply conflicts with
// another field manager: it names the fields and their managers, and the
// commands that settle it. deploy-web never forces, so either the manifest
// takes the live values, or the fields are handed to deploy-web: a
// server-side apply manager gives them up by applying its own manifest
// without them; an update (kubectl edit, patch, scale, set) cannot give a
// field up, so the user takes the fields over as deploy-web with
// --force-conflicts from the rendered source, which overwrites that
// manager's values with the rendered ones.
//
// A Secret's fields are keys of its values: they are not named.
func conflictBlocker(env *envconfig.Environment, kubeconfig string, o *unstructured.Unstructured, err error) Blocker {
	ref := o.GetKind() + "/" + o.GetName()
	cs := fieldConflicts(err)
	b := Blocker{ID: "field-conflict:" + ref}
	if isSecret(o) {
		for i := range cs {
			cs[i].Field = "(a value)"
		}
	}
	if len(cs) == 0 {
		b.Message = fmt.Sprintf("%s: fields are owned by another manager: %v", ref, objErr(o, err))
		b.UnblockHint = "deploy-web never forces: hand the fields over (or stop the other manager) and plan again"
		return b
	}
	byManager := map[string][]string{}
	update := map[string]bool{}
	var managers []string
	for _, c := range cs {
		if _, ok := byManager[c.Manager]; !ok {
			managers = append(managers, c.Manager)
		}
		if !slices.Contains(byManager[c.Manager], c.Field) {
			byManager[c.Manager] = append(byManager[c.Manager], c.Field)
		}
		update[c.Manager] = update[c.Manager] || c.Update
	}
	var owned, hints []string
	kc := kubectlPrefix(env, kubeconfig)
	for _, m := range managers {
		op := "server-side apply"
		if update[m] {
			op = "update"
		}
		owned = append(owned, fmt.Sprintf("%s owned by %s (%s)", strings.Join(byManager[m], ", "), m, op))
		if !update[m] {
			hints = append(hints, fmt.Sprintf("%s gives them up by applying its manifest without them: %s -n %s apply --server-side --field-manager=%s -f <its manifest without %s>",
				m, kc, env.Namespace, quoteArg(m), strings.Join(byManager[m], ", ")))
		}
	}
	b.Message = fmt.Sprintf("%s: the apply would change fields another manager set: %s", ref, strings.Join(owned, "; "))
	take := fmt.Sprintf("take them over yourself as %s, overwriting them with the rendered values (this re-applies every rendered object): %s | %s -n %s apply --server-side --field-manager=%s --force-conflicts -f -",
		FieldManager, kustomizeCommand(env), kc, env.Namespace, FieldManager)
	b.UnblockHint = "deploy-web never forces. To keep the live values, put them in the manifest and plan again. To hand the fields to deploy-web, " +
		strings.Join(append(hints, take), "; or ") + "; then plan again (after the take-over, apply again too: it puts back deploy-web's environment and Secret hash annotations, which kubectl's apply drops)"
	return b
}

// kustomizeCommand renders the environment's source with kubectl, for a
// hint: the local folder, or the repository's path at its ref (kustomize
// reads git URLs).
func kustomizeCommand(env *envconfig.Environment) string {
	if env.Source.Repo == "" {
		return "kubectl kustomize " + quoteArg(env.Resolve(env.Source.Path))
	}
	return "kubectl kustomize " + quoteArg(fmt.Sprintf("%s//%s?ref=%s", envconfig.RedactURL(env.Source.Repo), strings.Trim(env.Source.Path, "/"), env.Source.Ref))
}
