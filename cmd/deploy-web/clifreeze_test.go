package main

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign"
)

// TestCLIFreezeDecision: the CLI's freeze decision over a cluster's
// freezes ConfigMap: no ConfigMap is no freeze; a freeze of the
// environment refuses, naming the freeze, its reason and when it opens;
// a freeze elsewhere does not; unreadable freezes (garbled, forbidden)
// refuse and say how to proceed; --break-glass lets the run through only
// for a user the cluster lets update the freezes ConfigMap, and only with
// a one-line reason.
func TestCLIFreezeDecision(t *testing.T) {
	const ns = "deploy-web"
	where := freezesWhere{env: "dev", ns: ns}
	target := freeze.Target{Cluster: "c1", Environment: "dev", Namespace: "dev"}
	now := time.Now()
	frozen := freeze.Freeze{Scope: scope.Scope{Environments: []string{"dev"}}, Start: now.Add(-time.Minute), End: now.Add(time.Hour),
		Reason: "release week", Ticket: "https://tickets.example.com/CHG-7", Author: freeze.Author{Email: "alice@example.com", Subject: "alice"}}
	elsewhere := frozen
	elsewhere.Scope = scope.Scope{Environments: []string{"prod"}}
	forbidGet := func(c *fake.Clientset) {
		c.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, freeze.ConfigMapName, errors.New("RBAC: no"))
		})
	}
	garble := func(c *fake.Clientset) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: freeze.ConfigMapName}, Data: map[string]string{freeze.DataKey: `{"freezes": [`}}
		if _, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A freeze edited by hand to carry a terminal escape in its reason.
	hostile := func(c *fake.Clientset) {
		data := `{"freezes": [{"id": "fz-0000beef", "scope": {"environments": ["dev"]}, "start": "` + now.Add(-time.Minute).UTC().Format(time.RFC3339) +
			`", "end": "` + now.Add(time.Hour).UTC().Format(time.RFC3339) + `", "reason": "release\u001b[2J\u001b]0;pwned\u0007", "author": {"subject": "mallory"}}]}`
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: freeze.ConfigMapName}, Data: map[string]string{freeze.DataKey: data}}
		if _, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mayUpdate := func(allowed bool) func(*fake.Clientset) {
		return func(c *fake.Clientset) {
			c.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				r := a.(k8stesting.CreateAction).GetObject().(*authzv1.SelfSubjectAccessReview)
				ra := r.Spec.ResourceAttributes
				r.Status.Allowed = allowed && ra != nil && ra.Namespace == ns && ra.Verb == "update" && ra.Resource == "configmaps" && ra.Name == freeze.ConfigMapName
				return true, r, nil
			})
		}
	}
	tests := []struct {
		name      string
		freezes   []freeze.Freeze
		setup     func(*fake.Clientset)
		reason    string
		want      error    // errors.Is target; nil: let through
		wantText  []string // in the error's text
		overrides bool     // an Override is returned
	}{
		{name: "no ConfigMap"},
		{name: "a freeze of another environment", freezes: []freeze.Freeze{elsewhere}},
		{name: "a freeze of the environment", freezes: []freeze.Freeze{elsewhere, frozen}, want: &freeze.FrozenError{},
			wantText: []string{"environment dev is frozen by freeze fz-", "frozen until ", "by alice@example.com (sub alice): release week (https://tickets.example.com/CHG-7)", "nothing was touched", "--break-glass"}},
		{name: "garbled freezes", setup: garble, want: freeze.ErrUnreadable,
			wantText: []string{"could not be read", "ConfigMap deploy-web/deploy-web-freezes", "changed outside deploy-web", "kubectl -n deploy-web delete configmap deploy-web-freezes", "nothing was touched"}},
		{name: "a freeze whose reason holds a terminal escape", setup: hostile, want: freeze.ErrUnreadable,
			wantText: []string{"could not be read", "no signature", "kubectl -n deploy-web delete configmap deploy-web-freezes"}},
		{name: "freezes the user may not read", setup: forbidGet, want: freeze.ErrUnreadable,
			wantText: []string{"could not be read", "forbidden", "needs get on configmaps in namespace deploy-web", `consoleNamespace: ""`}},
		{name: "break-glass by a user who may change the freezes", freezes: []freeze.Freeze{frozen}, setup: mayUpdate(true), reason: "CVE-2026-1 hotfix", overrides: true},
		{name: "break-glass by a user who may not", freezes: []freeze.Freeze{frozen}, setup: mayUpdate(false), reason: "CVE-2026-1 hotfix", want: freeze.ErrBreakGlassDenied,
			wantText: []string{"--break-glass refused", "update ConfigMap deploy-web/deploy-web-freezes", "release week", "nothing was touched"}},
		{name: "break-glass with a reason of two lines", freezes: []freeze.Freeze{frozen}, setup: mayUpdate(true), reason: "hotfix\nreally", want: &freeze.FrozenError{},
			wantText: []string{"--break-glass: ", "reason", "nothing was touched"}},
		{name: "break-glass with a blank reason", freezes: []freeze.Freeze{frozen}, setup: mayUpdate(true), reason: "   ", want: &freeze.FrozenError{},
			wantText: []string{"--break-glass: ", "required", "nothing was touched"}},
		{name: "break-glass where nothing is frozen", freezes: []freeze.Freeze{elsewhere}, setup: mayUpdate(true), reason: "CVE-2026-1 hotfix"},
		{name: "break-glass through unreadable freezes", setup: func(c *fake.Clientset) { garble(c); mayUpdate(true)(c) }, reason: "CVE-2026-1 hotfix", want: freeze.ErrUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientset()
			store := freeze.NewStore(c.CoreV1(), ns, auditKeys(t, c.CoreV1(), ns))
			var ids []string
			for _, f := range tt.freezes {
				stored, err := store.Add(t.Context(), f)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, stored.ID)
			}
			if tt.setup != nil {
				tt.setup(c)
			}
			o, err := cliFreezeDecision(t.Context(), c, where, target, tt.reason)
			t.Logf("cliFreezeDecision() = %v", err)
			switch fe := (*freeze.FrozenError)(nil); {
			case tt.want == nil && err != nil:
				t.Fatalf("cliFreezeDecision() = %v, want let through", err)
			case tt.want == nil:
			case errors.As(tt.want, &fe):
				if !errors.As(err, &fe) {
					t.Fatalf("cliFreezeDecision() = %v, want a *freeze.FrozenError", err)
				}
				if fe.Freeze.ID != ids[len(ids)-1] {
					t.Errorf("refused by freeze %s, want %s", fe.Freeze.ID, ids[len(ids)-1])
				}
			case !errors.Is(err, tt.want):
				t.Fatalf("cliFreezeDecision() = %v, want %v", err, tt.want)
			}
			for _, w := range tt.wantText {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("cliFreezeDecision() = %v, want a message with %q", err, w)
				}
			}
			if err != nil && strings.ContainsAny(err.Error(), "\x1b\x07") {
				t.Errorf("cliFreezeDecision() = %q, want no control character of the ConfigMap's in the message", err)
			}
			if got := o != nil; got != tt.overrides {
				t.Fatalf("cliFreezeDecision() override = %+v, want one: %v", o, tt.overrides)
			}
			if o != nil && (o.Reason != tt.reason || o.Freeze.ID != ids[0] || o.By.Subject == "" || !strings.Contains(o.Note(), "overrode freeze "+ids[0])) {
				t.Errorf("override = %+v, want freeze %s overridden with reason %q by a named person", o, ids[0], tt.reason)
			}
		})
	}
}

// TestCLIFreezesWithoutNamespace: an environment whose consoleNamespace
// is "" says its cluster runs no deploy-web: no freezes are read (the
// cluster is not even asked), and stderr says that none can refuse the
// write.
func TestCLIFreezesWithoutNamespace(t *testing.T) {
	var stderr strings.Builder
	f := cliFreezes{breakGlass: "hotfix", stderr: &stderr}
	none := ""
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Cluster: envconfig.ClusterRef{Context: "nowhere"}, ConsoleNamespace: &none}
	o, err := f.check(t.Context(), env, "/nonexistent/kubeconfig")
	if o != nil || err != nil {
		t.Errorf("check(consoleNamespace \"\") = %v, %v; want nothing read, nothing refused", o, err)
	}
	if want := "no deploy freezes read (environment dev's consoleNamespace is empty"; !strings.Contains(stderr.String(), want) {
		t.Errorf("check(consoleNamespace \"\") stderr = %q, want %q", stderr.String(), want)
	}
}

// auditKeys is the key the CLI and serve sign the freezes with: the
// audit records' Secret in namespace ns of cms's cluster.
func auditKeys(t *testing.T, cms audit.Kube, ns string) sign.Keys {
	t.Helper()
	s, err := audit.New(cms, nil, audit.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCLIAuditNamespace: the records of a CLI write go to the
// environment's consoleNamespace (deploy-web unless set), where its
// freezes are read; --audit-namespace naming another one is refused,
// naming both, unless --break-glass is given.
func TestCLIAuditNamespace(t *testing.T) {
	ops, none := "ops-console", ""
	tests := []struct {
		name       string
		console    *string
		flag       *string // nil: not given
		breakGlass string
		wantNS     string
		wantErr    string
		wantStderr string
	}{
		{"default", nil, nil, "", "deploy-web", "", ""},
		{"configured", &ops, nil, "", "ops-console", "", ""},
		{"the same, given", &ops, &ops, "", "ops-console", "", ""},
		{"none configured", &none, nil, "", "", "", ""},
		{"another", &ops, strPtr("deploy-web"), "", "", `--audit-namespace "deploy-web" is not deploy-web's namespace in environment dev's cluster, "ops-console" (its consoleNamespace)`, ""},
		{"none, given", nil, &none, "", "", `--audit-namespace "" is not deploy-web's namespace in environment dev's cluster, "deploy-web"`, ""},
		{"another, break-glass", nil, strPtr("elsewhere"), "hotfix", "elsewhere", "", `the audit records go to namespace "elsewhere", not "deploy-web"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			a := cliAudit{stderr: &stderr}
			fs := flag.NewFlagSet("apply", flag.ContinueOnError)
			a.register(fs)
			var args []string
			if tt.flag != nil {
				args = append(args, "--audit-namespace="+*tt.flag)
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			env := &envconfig.Environment{Name: "dev", Namespace: "dev", ConsoleNamespace: tt.console}
			err := a.resolve(env, tt.breakGlass)
			switch {
			case tt.wantErr != "":
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != exitRefused || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("resolve = %v, want exit %d naming %q", err, exitRefused, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("resolve = %v, want nil", err)
			}
			if a.ns != tt.wantNS || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("resolve: ns %q, stderr %q; want %q, %q", a.ns, stderr.String(), tt.wantNS, tt.wantStderr)
			}
		})
	}
}

func strPtr(s string) *string { return &s }
