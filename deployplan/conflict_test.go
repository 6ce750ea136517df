package deployplan

import (
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// conflictErr is the API server's 409 of a server-side apply, as it
// words it (apimachinery's managedfields conflict causes).
func conflictErr(causes ...metav1.StatusCause) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict,
		Message: "Apply failed with conflicts", Details: &metav1.StatusDetails{Causes: causes}}}
}

func TestConflictBlocker(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Cluster: envconfig.ClusterRef{Context: "kind-dev"}, Source: envconfig.Source{Path: "/repo/deploy/dev"}}
	edit := metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Field: ".spec.template.spec.containers[name=\"app\"].image",
		Message: `conflict with "kubectl-edit" using apps/v1 at 2026-12-02T01:00:00Z`}
	helm := metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Field: ".spec.replicas", Message: `conflict with "helm"`}
	dep := newObj("apps/v1", "Deployment", "dev", "api")

	b := conflictBlocker(env, "", dep, conflictErr(edit, helm))
	for _, want := range []string{
		`.spec.replicas owned by helm (server-side apply)`,
		`.spec.template.spec.containers[name="app"].image owned by kubectl-edit (update)`,
	} {
		if !strings.Contains(b.Message, want) {
			t.Errorf("conflictBlocker().Message = %q, want it to name %q", b.Message, want)
		}
	}
	for _, want := range []string{
		"helm gives them up by applying its manifest without them: kubectl --context kind-dev -n dev apply --server-side --field-manager=helm -f <its manifest without .spec.replicas>",
		"kubectl kustomize /repo/deploy/dev | kubectl --context kind-dev -n dev apply --server-side --field-manager=deploy-web --force-conflicts -f -",
		"put them in the manifest",
	} {
		if !strings.Contains(b.UnblockHint, want) {
			t.Errorf("conflictBlocker().UnblockHint = %q, want it to contain %q", b.UnblockHint, want)
		}
	}
	if b.ID != "field-conflict:Deployment/api" {
		t.Errorf("conflictBlocker().ID = %q", b.ID)
	}

	// A Secret's conflicting fields are keys of its values: not named.
	sec := newObj("v1", "Secret", "dev", "token")
	sb := conflictBlocker(env, "", sec, conflictErr(metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Field: ".data.token", Message: `conflict with "kubectl-patch" using v1`}))
	if strings.Contains(sb.Message+sb.UnblockHint, "token\"") || strings.Contains(sb.Message, ".data.token") || !strings.Contains(sb.Message, "(a value) owned by kubectl-patch (update)") {
		t.Errorf("conflictBlocker(Secret) = %+v", sb)
	}

	// A git source renders with kustomize's git URL.
	genv := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "https://git.example.com/acme/deploy.git", Ref: "main", Path: "envs/dev"}}
	if h := conflictBlocker(genv, "", dep, conflictErr(edit)).UnblockHint; !strings.Contains(h, "kubectl kustomize 'https://git.example.com/acme/deploy.git//envs/dev?ref=main'") {
		t.Errorf("conflictBlocker(git source).UnblockHint = %q", h)
	}

	// A conflict without causes keeps the generic hint.
	if g := conflictBlocker(env, "", dep, apierrors.NewConflict(schema.GroupResource{Resource: "deployments"}, "api", nil)); !strings.Contains(g.UnblockHint, "never forces") {
		t.Errorf("conflictBlocker(no causes) = %+v", g)
	}
}
