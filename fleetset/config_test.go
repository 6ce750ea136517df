package fleetset

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/internal/strictyaml/strictyamltest"
)

// noFile says every kubeconfig path but these is missing.
func noFile(existing ...string) func(string) error {
	return func(p string) error {
		for _, e := range existing {
			if p == e {
				return nil
			}
		}
		return errors.New("no such file")
	}
}

func TestParse(t *testing.T) {
	check := noFile("/cfg/us.kubeconfig", "/abs/eu.kubeconfig")
	for _, tt := range []struct {
		name    string
		yaml    string
		want    []Cluster
		wantErr []string // each must be in the error
	}{
		{
			name: "two clusters, relative and absolute kubeconfigs, default App resource",
			yaml: `
- name: us-east
  kubeconfig: us.kubeconfig
  context: admin@us
  namespaces: [storefront, payments]
- name: eu-west
  kubeconfig: /abs/eu.kubeconfig
  namespaces: [storefront]
  appResource: widgets.v1alpha1.example.com
- name: home
  inCluster: true
  namespaces: [storefront]
`,
			want: []Cluster{
				{Name: "us-east", Kubeconfig: "/cfg/us.kubeconfig", Context: "admin@us", Namespaces: []string{"storefront", "payments"}, AppResource: DefaultAppResource},
				{Name: "eu-west", Kubeconfig: "/abs/eu.kubeconfig", Namespaces: []string{"storefront"}, AppResource: "widgets.v1alpha1.example.com"},
				{Name: "home", InCluster: true, Namespaces: []string{"storefront"}, AppResource: DefaultAppResource},
			},
		},
		{
			name: "one kubeconfig, two contexts",
			yaml: `[{name: a, kubeconfig: us.kubeconfig, context: one, namespaces: [x]}, {name: b, kubeconfig: us.kubeconfig, context: two, namespaces: [x]}]`,
			want: []Cluster{
				{Name: "a", Kubeconfig: "/cfg/us.kubeconfig", Context: "one", Namespaces: []string{"x"}, AppResource: DefaultAppResource},
				{Name: "b", Kubeconfig: "/cfg/us.kubeconfig", Context: "two", Namespaces: []string{"x"}, AppResource: DefaultAppResource},
			},
		},
		{name: "empty file", yaml: ``, wantErr: []string{"clusters: give at least one cluster"}},
		{name: "not a list", yaml: `clusters: []`, wantErr: []string{"line 1: clusters: want a list, got a mapping"}},
		{name: "unknown key", yaml: `[{name: a, inCluster: true, namespaces: [x], token: abc}]`, wantErr: []string{"line 1: clusters[0] (a).token: unknown key"}},
		{name: "misspelt key", yaml: "- name: a\n  inCluster: true\n  namespaces: [x]\n  contxt: c\n", wantErr: []string{`line 4: clusters[0] (a).contxt: unknown key: did you mean "context"?`}},
		{name: "key in another case", yaml: "- name: a\n  InCluster: true\n  namespaces: [x]\n", wantErr: []string{`line 2: clusters[0] (a).InCluster: unknown key: keys are case-sensitive, did you mean "inCluster"?`}},
		{name: "key written twice", yaml: "- name: a\n  inCluster: true\n  namespaces: [x]\n  namespaces: [y]\n", wantErr: []string{"line 4: clusters[0] (a).namespaces: written twice (also on line 3)"}},
		{name: "namespaces by alias", yaml: "- {name: a, inCluster: true, namespaces: &ns [x]}\n- {name: b, kubeconfig: us.kubeconfig, namespaces: *ns}\n", wantErr: []string{"clusters[0] (a).namespaces: anchors (&name) and aliases (*name) are not allowed", "clusters[1] (b).namespaces: anchors"}},
		{name: "one context twice", yaml: `[{name: a, kubeconfig: us.kubeconfig, context: admin@us, namespaces: [x]}, {name: b, kubeconfig: ./us.kubeconfig, context: admin@us, namespaces: [y]}]`,
			wantErr: []string{`clusters[1] (b).context: clusters[0] already reads /cfg/us.kubeconfig, context "admin@us": it is one cluster; list it once`}},
		{name: "one current context twice", yaml: `[{name: a, kubeconfig: us.kubeconfig, namespaces: [x]}, {name: b, kubeconfig: /cfg/us.kubeconfig, namespaces: [y]}]`,
			wantErr: []string{`clusters[1] (b).context: clusters[0] already reads /cfg/us.kubeconfig, context (its current context): it is one cluster`}},
		{name: "missing name", yaml: `[{inCluster: true, namespaces: [x]}]`, wantErr: []string{"clusters[0].name: required"}},
		{name: "name not a DNS label", yaml: `[{name: "EU/West", inCluster: true, namespaces: [x]}]`, wantErr: []string{`clusters[0].name: "EU/West" is not a DNS label`}},
		{name: "name too long", yaml: `[{name: "` + strings.Repeat("a", 64) + `", inCluster: true, namespaces: [x]}]`, wantErr: []string{"clusters[0].name:", "is not a DNS label"}},
		{name: "dot-dot name", yaml: `[{name: "..", inCluster: true, namespaces: [x]}]`, wantErr: []string{`clusters[0].name: ".." is not a DNS label`}},
		{name: "duplicate names", yaml: `[{name: a, inCluster: true, namespaces: [x]}, {name: a, kubeconfig: us.kubeconfig, namespaces: [x]}]`, wantErr: []string{`clusters[1] (a).name: "a" is also clusters[0]'s name`}},
		{name: "neither kubeconfig nor inCluster", yaml: `[{name: a, namespaces: [x]}]`, wantErr: []string{"clusters[0] (a).kubeconfig: required (or inCluster: true)"}},
		{name: "both", yaml: `[{name: a, inCluster: true, kubeconfig: us.kubeconfig, namespaces: [x]}]`, wantErr: []string{"clusters[0] (a): give exactly one of kubeconfig and inCluster"}},
		{name: "inCluster with a context", yaml: `[{name: a, inCluster: true, context: c, namespaces: [x]}]`, wantErr: []string{"clusters[0] (a).context: inCluster: true takes no context"}},
		{name: "two inCluster", yaml: `[{name: a, inCluster: true, namespaces: [x]}, {name: b, inCluster: true, namespaces: [x]}]`, wantErr: []string{"clusters[1] (b).inCluster: clusters[0] already uses the in-cluster configuration"}},
		{name: "missing kubeconfig file", yaml: `[{name: a, kubeconfig: nope.yaml, namespaces: [x]}]`, wantErr: []string{"clusters[0] (a).kubeconfig: /cfg/nope.yaml: no such file"}},
		{name: "no namespaces", yaml: `[{name: a, inCluster: true}]`, wantErr: []string{"clusters[0] (a).namespaces: give at least one platform namespace"}},
		{name: "bad namespace", yaml: `[{name: a, inCluster: true, namespaces: ["kube system", ok]}]`, wantErr: []string{`clusters[0] (a).namespaces[0]: "kube system" is not a namespace name`}},
		{name: "namespace twice", yaml: `[{name: a, inCluster: true, namespaces: [x, x]}]`, wantErr: []string{`clusters[0] (a).namespaces[1]: "x" is listed twice`}},
		{name: "bad app resource", yaml: `[{name: a, inCluster: true, namespaces: [x], appResource: apps}]`, wantErr: []string{`clusters[0] (a).appResource: "apps" is not resource.version.group`}},
		{name: "control characters in a context", yaml: "[{name: a, kubeconfig: us.kubeconfig, context: \"a\\nb\", namespaces: [x]}]", wantErr: []string{"clusters[0] (a).context: not a context name"}},
		{name: "every problem at once", yaml: `[{name: A}, {name: b, inCluster: true, namespaces: [x], appResource: x}]`, wantErr: []string{"clusters[0].name", "clusters[0].kubeconfig", "clusters[0].namespaces", "clusters[1] (b).appResource"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.yaml), "/cfg", check)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Parse() = %+v, want an error with %q", got, tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Parse() error = %q, want it to contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseExactKeys: every key of the clusters file (from Cluster's json
// tags, so a new key is covered) in every other spelling, instead of the
// key or beside it, is refused with an error naming it; encoding/json
// would have taken `InCluster: true` or `NAMESPACES: [...]`.
func TestParseExactKeys(t *testing.T) {
	good := []byte(`
- name: a
  kubeconfig: us.kubeconfig
  context: c
  inCluster: false
  namespaces: [x]
  appResource: apps.v1.hanzo.ai
`)
	strictyamltest.CaseVariants(t, good, reflect.TypeFor[[]Cluster](), false, func(doc []byte) error {
		_, err := Parse(doc, "/cfg", noFile("/cfg/us.kubeconfig"))
		return err
	})
}

// TestParseDecodesAsBefore: README's clusters file decodes to what
// sigs.k8s.io/yaml made of it (then Parse's defaults).
func TestParseDecodesAsBefore(t *testing.T) {
	readme := []byte(`
# clusters.yaml
- name: us-east                    # a DNS label, unique: URLs, rows, filters, metrics, audit
  inCluster: true                  # the pod's own service account (at most one cluster)
  namespaces: [storefront, payments]
- name: eu-west
  kubeconfig: eu-west.kubeconfig   # a file; relative to this file's folder
  context: deploy-web@eu-west      # optional: default the kubeconfig's current context
  namespaces: [storefront]
  appResource: apps.v1.hanzo.ai    # optional: this default, or another operator's CRD
`)
	var old []Cluster
	if err := yaml.UnmarshalStrict(readme, &old); err != nil {
		t.Fatalf("the old decoder: %v", err)
	}
	old[0].AppResource = DefaultAppResource
	old[1].Kubeconfig = "/cfg/eu-west.kubeconfig"
	got, err := Parse(readme, "/cfg", noFile("/cfg/eu-west.kubeconfig"))
	if err != nil {
		t.Fatalf("Parse(README) = %v", err)
	}
	if diff := cmp.Diff(old, got); diff != "" {
		t.Errorf("Parse(README) differs from the old decoder (-old +new):\n%s", diff)
	}
}

// TestLoadFileNeverShowsCredentials: a kubeconfig's content (its token)
// appears in no error, even when the file is the wrong thing.
func TestLoadFileNeverShowsCredentials(t *testing.T) {
	dir := t.TempDir()
	const secret = "token-s3cr3t-value"
	kc := filepath.Join(dir, "eu.kubeconfig")
	if err := os.WriteFile(kc, []byte("users: [{name: u, user: {token: "+secret+"}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "clusters.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[{name: eu, kubeconfig: eu.kubeconfig, namespaces: [shop]}]")
	cs, err := LoadFile(file)
	if err != nil {
		t.Fatalf("LoadFile() error = %v", err)
	}
	if cs[0].Kubeconfig != kc {
		t.Errorf("LoadFile() kubeconfig = %q, want %q (relative to the file)", cs[0].Kubeconfig, kc)
	}
	// The kubeconfig has no cluster or context: building the client fails,
	// naming the cluster and the file, not the token.
	if _, err := cs[0].RESTConfig(); err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "cluster eu") {
		t.Errorf("RESTConfig() error = %v, want one naming cluster eu without the token", err)
	}
	// A kubeconfig given as the clusters file itself: a YAML error that
	// must not quote the file.
	if _, err := LoadFile(kc); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("LoadFile(a kubeconfig) error = %v, want an error without the token", err)
	}
	write("[{name: eu, kubeconfig: " + dir + ", namespaces: [shop]}]")
	if _, err := LoadFile(file); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("LoadFile(kubeconfig is a folder) error = %v, want not a regular file", err)
	}
}

func TestDefaultName(t *testing.T) {
	for _, tt := range []struct {
		inCluster bool
		context   string
		want      string
	}{
		{true, "", "in-cluster"},
		{false, "", "in-cluster"},
		{false, "devcluster", "devcluster"},
		{false, "kind-kind", "kind-kind"},
		{false, "admin@Prod.Example", "admin-prod-example"},
		{false, "arn:aws:eks:eu-west-1:123456789012:cluster/" + strings.Repeat("x", 70), strings.Repeat("x", 63)},
		{false, "---", "in-cluster"},
		{false, "ünï", "n"},
	} {
		if got := DefaultName(tt.inCluster, tt.context); got != tt.want || !ValidName(got) {
			t.Errorf("DefaultName(%t, %q) = %q, want %q (a DNS label)", tt.inCluster, tt.context, got, tt.want)
		}
	}
}
