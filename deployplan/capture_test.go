package deployplan

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/labels"
)

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOwnedFields: the capture keeps exactly what deploy-web applied.
func TestOwnedFields(t *testing.T) {
	live := &unstructured.Unstructured{Object: mustJSON(t, `{
	  "apiVersion": "apps/v1", "kind": "Deployment",
	  "metadata": {"name": "api", "namespace": "dev", "uid": "u1", "resourceVersion": "7",
	    "labels": {"app": "api", "team": "x"},
	    "annotations": {"deployment.kubernetes.io/revision": "3"}},
	  "spec": {"replicas": 2, "revisionHistoryLimit": 10,
	    "selector": {"matchLabels": {"app": "api"}},
	    "template": {"metadata": {"labels": {"app": "api"}},
	      "spec": {"containers": [
	        {"name": "api", "image": "r/api:v1", "imagePullPolicy": "IfNotPresent",
	         "ports": [{"containerPort": 8080, "protocol": "TCP"}], "args": ["a", "b"]},
	        {"name": "sidecar", "image": "r/side:1"}],
	       "finalizersLike": ["x", "y"]}}},
	  "status": {"replicas": 2}}`)}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: "Update", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:deployment.kubernetes.io/revision":{}}}}`)},
		{Manager: "kubectl-label", Operation: "Update", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:team":{}}}}`)},
		{Manager: FieldManager, Operation: "Apply", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{}}},
		  "f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},
		  "f:spec":{"f:containers":{"k:{\"name\":\"api\"}":{".":{},"f:image":{},"f:name":{},"f:args":{},
		    "f:ports":{"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}},
		  "f:finalizersLike":{"v:\"y\"":{}}}}}}`)},
	})
	got, err := OwnedFields(live, FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	want := mustJSON(t, `{
	  "apiVersion": "apps/v1", "kind": "Deployment",
	  "metadata": {"name": "api", "namespace": "dev", "labels": {"app": "api"}},
	  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}},
	    "template": {"metadata": {"labels": {"app": "api"}},
	      "spec": {"containers": [{"name": "api", "image": "r/api:v1", "args": ["a", "b"],
	         "ports": [{"containerPort": 8080}]}],
	       "finalizersLike": ["y"]}}}}`)
	gb, _ := json.Marshal(got.Object)
	wb, _ := json.Marshal(want)
	if diff := cmp.Diff(string(wb), string(gb)); diff != "" {
		t.Errorf("OwnedFields (-want +got):\n%s", diff)
	}

	// Never applied by deploy-web: the identity alone.
	live.SetManagedFields(live.GetManagedFields()[:2])
	got, _ = OwnedFields(live, FieldManager)
	if len(got.Object) != 3 || got.GetName() != "api" || got.GetNamespace() != "dev" {
		t.Errorf("OwnedFields of an object deploy-web never applied = %v, want its identity", got.Object)
	}
}

// TestSecretHash: canonical over data and stringData; any change of a
// value, the type or an annotation changes it.
func TestSecretHash(t *testing.T) {
	sec := func(s string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: mustJSON(t, s)}
	}
	base := sec(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"a":"1","b":"2"}}`)
	h, err := SecretHash(base)
	if err != nil || !strings.HasPrefix(h, "sha256:") || len(h) != 71 {
		t.Fatalf("SecretHash = %q, %v", h, err)
	}
	same := []string{
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"a":"MQ==","b":"Mg=="}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"Opaque","data":{"b":"Mg=="},"stringData":{"a":"1"}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"a":"bm8=","b":"Mg=="},"stringData":{"a":"1"}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"other","annotations":{"` + SecretHashAnnotation + `":"x"}},"stringData":{"a":"1","b":"2"}}`,
	}
	for _, s := range same {
		if got, _ := SecretHash(sec(s)); got != h {
			t.Errorf("SecretHash(%s) = %s, want %s (same values)", s, got, h)
		}
	}
	differ := []string{
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"a":"1","b":"3"}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"a":"1"}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"kubernetes.io/basic-auth","stringData":{"a":"1","b":"2"}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"immutable":true,"stringData":{"a":"1","b":"2"}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","annotations":{"x":"y"}},"stringData":{"a":"1","b":"2"}}`,
	}
	for _, s := range differ {
		if got, _ := SecretHash(sec(s)); got == h {
			t.Errorf("SecretHash(%s) = the hash of another Secret", s)
		}
	}
	if _, err := SecretHash(sec(`{"kind":"Secret","data":{"a":"not base64!"}}`)); err == nil {
		t.Error("SecretHash of a data value that is not base64: no error")
	}
}

func TestReservedName(t *testing.T) {
	obj := func(apiVersion, kind, name string, labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName(name)
		u.SetLabels(labels)
		return u
	}
	tests := []struct {
		o        *unstructured.Unstructured
		reserved bool
	}{
		{obj("coordination.k8s.io/v1", "Lease", LockName, nil), true},
		{obj("coordination.k8s.io/v1", "Lease", "other-lock", nil), false},
		{obj("v1", "ConfigMap", "deploy-web-plan-20260101-120000-abcdef", nil), true},
		{obj("v1", "ConfigMap", "settings", map[string]string{labels.Kind: "run"}), true},
		{obj("v1", "ConfigMap", "api-config", nil), false},
		{obj("v1", "ConfigMap", CaptureRecordName, nil), true},
		{obj("apps/v1", "Deployment", "deploy-web", nil), true},
		{obj("v1", "ServiceAccount", "deploy-web", nil), true},
		{obj("apps/v1", "Deployment", "api", nil), false},
	}
	for _, tt := range tests {
		if got := ReservedName(tt.o) != ""; got != tt.reserved {
			t.Errorf("ReservedName(%s/%s) reserved = %t, want %t", tt.o.GetKind(), tt.o.GetName(), got, tt.reserved)
		}
	}
	bs := ReservedCheck([]*unstructured.Unstructured{tests[0].o, tests[1].o})
	// One blocker per root cause: reserved-name, naming the Lease.
	if len(bs) != 1 || bs[0].ID != "reserved-name" || len(bs[0].Affected) != 1 || bs[0].Affected[0] != "Lease/"+LockName || bs[0].UnblockHint == "" {
		t.Errorf("ReservedCheck = %+v, want one reserved-name blocker for the lock", bs)
	}
}

// TestReadCapture: a capture is read as kubectl would read it, and a
// tampered one is refused with the file named.
func TestReadCapture(t *testing.T) {
	write := func(dir, name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := t.TempDir()
	write(good, "000-configmap-a.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"9","managedFields":[{}]},"data":{"k":"v"}}`)
	write(good, "001-service-b.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: c}\n")
	write(good, CaptureIndexFile, `{"kind":"Secret","name":"db","existed":true}`+"\n"+`{"kind":"ConfigMap","name":"a","existed":true}`+"\n")
	write(good, CaptureReadmeFile, "not an object")
	os.Mkdir(filepath.Join(good, "sub"), 0o755)
	objs, secrets, err := ReadCapture(good)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
		if o.GetResourceVersion() != "" || o.GetManagedFields() != nil {
			t.Errorf("%s keeps server fields: %v", o.GetName(), o.Object["metadata"])
		}
	}
	if strings.Join(names, ",") != "ConfigMap/a,Service/b,Service/c" || strings.Join(secrets, ",") != "db" {
		t.Errorf("ReadCapture = %v, secrets %v", names, secrets)
	}

	tests := []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"symlink", func(dir string) { os.Symlink("/etc/passwd", filepath.Join(dir, "x.json")) }, "symlinks are not followed"},
		{"list", func(dir string) { write(dir, "l.json", `{"apiVersion":"v1","kind":"List","items":[]}`) }, "lists are not accepted"},
		{"no kind", func(dir string) { write(dir, "k.json", `{"metadata":{"name":"x"}}`) }, "without apiVersion or kind"},
		{"no name", func(dir string) {
			write(dir, "n.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"x-"}}`)
		}, "without a name"},
		{"not yaml", func(dir string) { write(dir, "b.yaml", "\x00\x01: [") }, "not an object"},
		{"too large", func(dir string) { write(dir, "big.json", strings.Repeat(" ", MaxCaptureFileBytes+1)) }, "larger than"},
		{"too many", func(dir string) {
			for i := 0; i <= MaxCaptureFiles; i++ {
				write(dir, filepath.Base(filepath.Join(dir, strings.Repeat("f", 1)+string(rune('a'+i%26))+"-"+itoa(i)+".txt")), "")
			}
		}, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(dir)
			_, _, err := ReadCapture(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadCapture = %v, want an error saying %q", err, tt.want)
			}
		})
	}
	if _, _, err := ReadCapture(filepath.Join(good, "000-configmap-a.json")); err == nil {
		t.Error("ReadCapture of a file: no error")
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestKubectlPrefix(t *testing.T) {
	tests := []struct {
		env  envconfig.Environment
		flag string
		want string
	}{
		{envconfig.Environment{Cluster: envconfig.ClusterRef{Context: "dev", Kubeconfig: "/k/dev.yaml"}}, "/ignored", "kubectl --kubeconfig /k/dev.yaml --context dev"},
		{envconfig.Environment{Cluster: envconfig.ClusterRef{Context: "dev", Kubeconfig: "kc.yaml"}, ConfigDir: "/etc/dw"}, "", "kubectl --kubeconfig /etc/dw/kc.yaml --context dev"},
		{envconfig.Environment{Cluster: envconfig.ClusterRef{Context: "my ctx"}}, "/home/a/.kube/x", "kubectl --kubeconfig /home/a/.kube/x --context 'my ctx'"},
		{envconfig.Environment{Cluster: envconfig.ClusterRef{Context: "dev"}}, "", "kubectl --context dev"},
		{envconfig.Environment{Cluster: envconfig.ClusterRef{InCluster: true}}, "/x", "kubectl"},
	}
	for _, tt := range tests {
		if got := kubectlPrefix(&tt.env, tt.flag); got != tt.want {
			t.Errorf("kubectlPrefix(%+v, %q) = %q, want %q", tt.env.Cluster, tt.flag, got, tt.want)
		}
	}
}

func TestSecretWrites(t *testing.T) {
	entry := func(manager string, sec int64, fields string) metav1.ManagedFieldsEntry {
		tm := metav1.Unix(sec, 0)
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Time: &tm, FieldsV1: metav1.NewFieldsV1(fields)}
	}
	untimed := entry("kubectl-edit", 0, `{"f:data":{"f:a":{}}}`)
	untimed.Time = nil
	tests := []struct {
		name string
		mfs  []metav1.ManagedFieldsEntry
		want string
	}{
		{"deploy-web alone", []metav1.ManagedFieldsEntry{entry(FieldManager, 10, `{"f:data":{"f:a":{}},"f:metadata":{"f:annotations":{}}}`)}, ""},
		{"a label by hand", []metav1.ManagedFieldsEntry{entry(FieldManager, 10, `{"f:data":{"f:a":{}}}`), entry("kubectl-label", 20, `{"f:metadata":{"f:labels":{"f:x":{}}}}`)}, ""},
		{"a value by hand after the apply", []metav1.ManagedFieldsEntry{entry(FieldManager, 10, `{"f:data":{"f:a":{}}}`), entry("kubectl-patch", 20, `{"f:data":{"f:a":{}}}`)}, "kubectl-patch"},
		// The trial's Secret that never settled: kubectl patch, then an
		// apply that wrote the value back; kubectl-patch still co-owns
		// data.token, but wrote nothing since.
		{"a value by hand, then an apply", []metav1.ManagedFieldsEntry{entry(FieldManager, 30, `{"f:stringData":{"f:a":{}}}`), entry("kubectl-patch", 20, `{"f:data":{"f:a":{}}}`)}, ""},
		{"the same second counts as after", []metav1.ManagedFieldsEntry{entry(FieldManager, 20, `{"f:data":{"f:a":{}}}`), entry("kubectl-patch", 20, `{"f:data":{"f:a":{}}}`)}, "kubectl-patch"},
		{"no time", []metav1.ManagedFieldsEntry{entry(FieldManager, 10, `{"f:data":{"f:a":{}}}`), untimed}, "kubectl-edit"},
		{"kubectl apply beside, deploy-web never applied", []metav1.ManagedFieldsEntry{entry("kubectl-client-side-apply", 5, `{"f:stringData":{}}`)}, "kubectl-client-side-apply"},
		{"the type by hand", []metav1.ManagedFieldsEntry{entry(FieldManager, 10, `{}`), entry("kubectl-edit", 11, `{"f:type":{}}`)}, "kubectl-edit"},
		// Only the Secret's own data, stringData, type and immutable count:
		// an annotation named "data" is not a value.
		{"an annotation named data by hand", []metav1.ManagedFieldsEntry{entry(FieldManager, 10, `{"f:data":{"f:a":{}}}`), entry("kubectl-annotate", 20, `{"f:metadata":{"f:annotations":{"f:data":{}}}}`)}, ""},
		{"an entry that does not parse", []metav1.ManagedFieldsEntry{entry(FieldManager, 10, `{"f:data":{"f:a":{}}}`), entry("kubectl-edit", 20, `{"f:data":`)}, "kubectl-edit"},
	}
	for _, tt := range tests {
		if _, got := secretWrites(tt.mfs); got != tt.want {
			t.Errorf("secretWrites(%s) writer = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestReadCaptureNames: a name or namespace that is not DNS-1123 (control
// characters, slashes) is refused, in an object file and in the index.
func TestReadCaptureNames(t *testing.T) {
	for _, tt := range []struct{ file, content string }{
		{"a.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a\u001b[2Jb","namespace":"dev"}}`},
		{"a.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"../a","namespace":"dev"}}`},
		{"a.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"de\nv"}}`},
		{CaptureIndexFile, `{"kind":"Secret","name":"db\r\nx","existed":true}` + "\n"},
		{CaptureIndexFile, `{"kind":"ConfigMap","name":"A","existed":true}` + "\n"},
		{CaptureIndexFile, "not json\n"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadCapture(dir); err == nil {
			t.Errorf("ReadCapture of %s %q: no error", tt.file, tt.content)
		}
	}
}

// TestCaptureChecks: an object is accepted only when the index lists it
// (kind, namespace, name, group) as existing, of a kind the engine writes,
// once; its uid must be the live object's; its images must be running or
// admitted by the catalog.
func TestCaptureChecks(t *testing.T) {
	obj := func(s string) *unstructured.Unstructured { return &unstructured.Unstructured{Object: mustJSON(t, s)} }
	cm := obj(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"dev"}}`)
	unlisted := obj(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"dev"}}`)
	created := obj(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"dev"}}`)
	otherNS := obj(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"prod"}}`)
	role := obj(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r","namespace":"dev"}}`)
	dep := obj(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api","namespace":"dev"},
	  "spec":{"template":{"spec":{"containers":[{"name":"api","image":"reg.example/api:old"},{"name":"evil","image":"evil.example/miner:1"}]}}}}`)
	index := []captureEntry{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "dev", Name: "a", Existed: true, UID: "u-a", File: "a.json"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "dev", Name: "c"},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role", Namespace: "dev", Name: "r", Existed: true, File: "r.json"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "dev", Name: "api", Existed: true, UID: "u-api", File: "api.json"},
	}
	from := map[*unstructured.Unstructured]string{cm: "a.json", unlisted: "b.json", created: "c.json", otherNS: "p.json", role: "r.json", dep: "api.json"}
	cm2 := cm.DeepCopy()
	from[cm2] = "a.json"
	entries, bs := captureChecks([]*unstructured.Unstructured{cm, unlisted, created, otherNS, role, dep, cm2}, from, index)
	var ids []string
	for _, b := range bs {
		ids = append(ids, b.ID)
	}
	want := "capture-unlisted:ConfigMap/b,capture-unlisted:ConfigMap/c,capture-unlisted:ConfigMap/a,capture-kind:Role/r,capture-duplicate:ConfigMap/a,capture-index:ConfigMap/a"
	if strings.Join(ids, ",") != want {
		t.Errorf("captureChecks blockers = %v, want %s", ids, want)
	}
	if len(entries) != 2 {
		t.Errorf("captureChecks accepted %d objects, want 2 (ConfigMap/a, Deployment/api)", len(entries))
	}

	liveCM := cm.DeepCopy()
	liveCM.SetUID("u-other")
	env := &envconfig.Environment{Name: "dev", Namespace: "dev"}
	actions := map[string]string{}
	bs = restoreUIDChecks(env, []*unstructured.Unstructured{cm, dep}, entries, map[string]*unstructured.Unstructured{key(cm): liveCM}, actions)
	if len(bs) != 1 || bs[0].ID != "capture-uid:ConfigMap/a" || actions[key(cm)] != ActionBlocked {
		t.Errorf("restoreUIDChecks = %v", bs)
	}
	liveCM.SetUID("u-a")
	if bs := restoreUIDChecks(env, []*unstructured.Unstructured{cm}, entries, map[string]*unstructured.Unstructured{key(cm): liveCM}, map[string]string{}); len(bs) != 0 {
		t.Errorf("restoreUIDChecks of the same uid = %v", bs)
	}

	cat := &Catalog{Services: []CatalogService{{Image: "reg.example/api:new"}}}
	liveDep := obj(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api","namespace":"dev"},
	  "spec":{"template":{"spec":{"containers":[{"name":"api","image":"reg.example/api:new"}]}}}}`)
	live := map[string]*unstructured.Unstructured{key(dep): liveDep}
	bs = restoreImageChecks([]*unstructured.Unstructured{dep}, live, cat, map[string]string{})
	if len(bs) != 1 || bs[0].ID != "capture-image:Deployment/api/evil" || !strings.Contains(bs[0].Message, "evil.example/miner:1") {
		t.Errorf("restoreImageChecks = %v", bs)
	}
	// Without a catalog, only the running images pass.
	bs = restoreImageChecks([]*unstructured.Unstructured{dep}, live, nil, map[string]string{})
	if len(bs) != 2 {
		t.Errorf("restoreImageChecks without a catalog = %v, want 2 blockers", bs)
	}
	// A running image passes without a catalog.
	liveDep2 := dep.DeepCopy()
	if bs := restoreImageChecks([]*unstructured.Unstructured{dep}, map[string]*unstructured.Unstructured{key(dep): liveDep2}, nil, map[string]string{}); len(bs) != 0 {
		t.Errorf("restoreImageChecks of running images = %v", bs)
	}
}

// TestCaptureChecksIndexMismatch: every index entry must match exactly
// one captured object of its file, and every object exactly one entry.
func TestCaptureChecksIndexMismatch(t *testing.T) {
	obj := func(s string) *unstructured.Unstructured { return &unstructured.Unstructured{Object: mustJSON(t, s)} }
	cm := func() *unstructured.Unstructured {
		return obj(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"dev"}}`)
	}
	entry := captureEntry{APIVersion: "v1", Kind: "ConfigMap", Namespace: "dev", Name: "a", Existed: true, File: "001-configmap-a.json"}
	tests := []struct {
		name  string
		files []string // the file of each object (one ConfigMap/a each)
		index []captureEntry
		want  string
	}{
		{"as written", []string{"001-configmap-a.json"}, []captureEntry{entry}, ""},
		{"object in another file than the index names", []string{"evil.json"}, []captureEntry{entry},
			"capture-index:ConfigMap/a,capture-index:ConfigMap/a"},
		{"index entry without its object", nil, []captureEntry{entry}, "capture-index:ConfigMap/a"},
		{"index lists it twice", []string{"001-configmap-a.json"}, []captureEntry{entry, entry}, "capture-index:ConfigMap/a,capture-index:ConfigMap/a,capture-index:ConfigMap/a"},
		{"existed without a file", []string{"001-configmap-a.json"}, []captureEntry{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "dev", Name: "a", Existed: true}},
			"capture-index:ConfigMap/a,capture-index:ConfigMap/a"},
		{"a file for an object that did not exist", nil, []captureEntry{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "dev", Name: "a", File: "001-configmap-a.json"}},
			"capture-index:ConfigMap/a"},
		{"the same object twice in its file", []string{"001-configmap-a.json", "001-configmap-a.json"}, []captureEntry{entry},
			"capture-duplicate:ConfigMap/a,capture-index:ConfigMap/a"},
		{"a Secret listed as existing has no file", nil, []captureEntry{{APIVersion: "v1", Kind: "Secret", Namespace: "dev", Name: "s", Existed: true}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			from := map[*unstructured.Unstructured]string{}
			for _, f := range tt.files {
				o := cm()
				objs = append(objs, o)
				from[o] = f
			}
			_, bs := captureChecks(objs, from, tt.index)
			var ids []string
			for _, b := range bs {
				ids = append(ids, b.ID)
			}
			if got := strings.Join(ids, ","); got != tt.want {
				t.Errorf("captureChecks(%s) = %s, want %s", tt.name, got, tt.want)
			}
		})
	}
}

// TestCaptureDigest: the digest a restore computes over what it reads is
// the one the apply computed over what it wrote; any change to an object
// file or the index, or an extra object file, changes it; the
// instructions do not count.
func TestCaptureDigest(t *testing.T) {
	dir := t.TempDir()
	env := &envconfig.Environment{Name: "dev", Namespace: "dev"}
	desired := []*unstructured.Unstructured{
		{Object: mustJSON(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"dev"}}`)},
		{Object: mustJSON(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new","namespace":"dev"}}`)},
	}
	live := desired[0].DeepCopy()
	live.SetUID("u-a")
	digest, err := writeCapture(dir, desired, map[string]*unstructured.Unstructured{key(desired[0]): live}, captureInfo{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	read := func() string {
		t.Helper()
		c, err := readCapture(dir)
		if err != nil {
			t.Fatal(err)
		}
		return c.digest
	}
	if got := read(); got != digest || !strings.HasPrefix(got, "sha256:") {
		t.Fatalf("digest read = %s, want the written %s", got, digest)
	}
	os.WriteFile(filepath.Join(dir, CaptureReadmeFile), []byte("changed"), 0o644)
	if got := read(); got != digest {
		t.Errorf("digest after the instructions changed = %s, want %s", got, digest)
	}
	idx, _ := os.ReadFile(filepath.Join(dir, CaptureIndexFile))
	for name, change := range map[string]func(){
		"an extra unindexed object file": func() {
			os.WriteFile(filepath.Join(dir, "zz.json"), []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"evil"},"spec":{"externalIPs":["10.96.0.1"]}}`), 0o644)
		},
		"an index line without namespace": func() {
			os.WriteFile(filepath.Join(dir, CaptureIndexFile), append(idx, `{"apiVersion":"v1","kind":"Service","name":"evil","existed":true}`+"\n"...), 0o644)
		},
		"an object file changed": func() {
			os.WriteFile(filepath.Join(dir, "000-configmap-a.json"), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"dev"},"data":{"k":"v"}}`), 0o644)
		},
	} {
		change()
		if got := read(); got == digest {
			t.Errorf("digest after %s = the written one, want another", name)
		}
		os.Remove(filepath.Join(dir, "zz.json"))
		os.WriteFile(filepath.Join(dir, CaptureIndexFile), idx, 0o644)
	}
}

// TestReadCaptureFIFO: a FIFO in a capture is refused at once (opening it
// would wait for a writer forever).
func TestReadCaptureFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "000-configmap-a.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := ReadCapture(dir)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadCapture of a FIFO = %v, want not a regular file", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ReadCapture of a folder with a FIFO did not return in 30s")
	}
	// readCaptureFile (a FIFO swapped in after the listing) does not wait
	// either.
	go func() {
		_, err := readCaptureFile(filepath.Join(dir, "000-configmap-a.json"))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("readCaptureFile of a FIFO = %v, want not a regular file", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("readCaptureFile of a FIFO did not return in 30s")
	}
}

// TestReadCaptureObjectCap: the object cap is checked while a file is
// decoded: a file of many tiny documents stops at the cap, across files
// too.
func TestReadCaptureObjectCap(t *testing.T) {
	docs := func(prefix string, n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString("{apiVersion: v1, kind: ConfigMap, metadata: {name: " + prefix + itoa(i) + "}}\n---\n")
		}
		return b.String()
	}
	if _, err := decodeCaptureFile("many.yaml", []byte(docs("a", 10)), 3); !errors.Is(err, errTooManyObjects) {
		t.Errorf("decodeCaptureFile of 10 documents with a cap of 3 = %v, want errTooManyObjects", err)
	}
	if got, err := decodeCaptureFile("few.yaml", []byte(docs("a", 3)), 3); err != nil || len(got) != 3 {
		t.Errorf("decodeCaptureFile of 3 documents with a cap of 3 = %d, %v", len(got), err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(docs("a", MaxCaptureFiles+500)), 0o644)
	if _, _, err := ReadCapture(dir); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("ReadCapture of one file of %d documents = %v", MaxCaptureFiles+500, err)
	}
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(docs("a", MaxCaptureFiles-5)), 0o644)
	os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(docs("b", 10)), 0o644)
	if _, _, err := ReadCapture(dir); !errors.Is(err, errTooManyObjects) {
		t.Errorf("ReadCapture of two files over the cap = %v, want errTooManyObjects", err)
	}
}

// TestEnvironmentMarker: the marker replaces a manifest's value, leaves
// the rendered object alone, and is not part of a Secret's hash.
func TestEnvironmentMarker(t *testing.T) {
	sec := &unstructured.Unstructured{Object: mustJSON(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"dev",
	  "annotations":{"a":"b","deploy-web.hanzo.ai/environment":"other"}},"stringData":{"k":"v"}}`)}
	got := withEnvironment(sec, "dev")
	if got.GetAnnotations()[EnvironmentAnnotation] != "dev" || got.GetAnnotations()["a"] != "b" {
		t.Errorf("withEnvironment annotations = %v", got.GetAnnotations())
	}
	if sec.GetAnnotations()[EnvironmentAnnotation] != "other" {
		t.Error("withEnvironment changed its argument")
	}
	h1, _ := SecretHash(sec)
	h2, _ := SecretHash(got)
	plain := sec.DeepCopy()
	plain.SetAnnotations(map[string]string{"a": "b"})
	h3, _ := SecretHash(plain)
	if h1 != h2 || h2 != h3 {
		t.Errorf("SecretHash depends on the environment marker: %s %s %s", h1, h2, h3)
	}
}

// TestCheckPruneCount: a prune of more than MaxPruneObjects orphans, or of
// more than half of the environment's objects, is refused; orphans that
// are never deleted (unmarked, PVCs) do not count.
func TestCheckPruneCount(t *testing.T) {
	orphans := func(n int, prunable bool) []Orphan {
		var out []Orphan
		for i := 0; i < n; i++ {
			out = append(out, Orphan{Kind: "ConfigMap", Name: "c" + itoa(i), prunable: prunable})
		}
		return out
	}
	for _, tt := range []struct {
		orphans  []Orphan
		rendered int
		refused  bool
	}{
		{nil, 0, false},
		{orphans(1, true), 7, false},
		{orphans(5, true), 5, false},
		{orphans(6, true), 5, true},
		{orphans(1, true), 0, true},
		{orphans(20, true), 100, false},
		{orphans(21, true), 100, true},
		{orphans(50, false), 1, false},
	} {
		err := checkPruneCount(tt.orphans, tt.rendered)
		if (err != nil) != tt.refused {
			t.Errorf("checkPruneCount(%d orphans, %d rendered) = %v, want refused %v", len(tt.orphans), tt.rendered, err, tt.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "--prune-many") {
			t.Errorf("refusal %v does not name --prune-many", err)
		}
	}
}

// TestRestoreActions: a run applies exactly the planned objects whose
// action is appliable; an object the decision leaves out is blocked and
// comes with a blocker, so a ready restore never restores less than its
// capture; nothing of an unrecorded capture is appliable.
func TestRestoreActions(t *testing.T) {
	cm := newObj("v1", "ConfigMap", "dev", "a")
	svc := newObj("v1", "Service", "dev", "evil")
	listed := map[string]captureEntry{key(cm): {}, key(svc): {}}
	tests := []struct {
		name       string
		planned    []*unstructured.Unstructured
		actions    map[string]string
		entries    map[string]captureEntry
		unrecorded bool
		blockers   []Blocker
		wantApply  []string
		wantAction string // of the Service
		wantIDs    string
	}{
		{"both planned", []*unstructured.Unstructured{cm, svc}, map[string]string{key(cm): ActionUpdate, key(svc): ActionCreate}, listed, false, nil,
			[]string{"ConfigMap/a", "Service/evil"}, ActionCreate, ""},
		{"the Service keyed apart from its index entry", []*unstructured.Unstructured{cm, svc}, map[string]string{key(cm): ActionUpdate, key(svc): ActionCreate}, map[string]captureEntry{key(cm): {}}, false, nil,
			[]string{"ConfigMap/a"}, ActionBlocked, "capture-not-appliable:Service/evil"},
		{"the Service never planned", []*unstructured.Unstructured{cm}, map[string]string{key(cm): ActionUpdate}, listed, false, nil,
			[]string{"ConfigMap/a"}, ActionUnknown, "capture-not-appliable:Service/evil"},
		{"blocked by a check", []*unstructured.Unstructured{cm, svc}, map[string]string{key(cm): ActionUpdate, key(svc): ActionBlocked}, listed, false, []Blocker{{ID: "capture-uid:Service/evil"}},
			[]string{"ConfigMap/a"}, ActionBlocked, "capture-uid:Service/evil"},
		{"an unrecorded capture", []*unstructured.Unstructured{cm, svc}, map[string]string{key(cm): ActionUpdate, key(svc): ActionCreate}, listed, true, []Blocker{{ID: captureUnrecorded}},
			nil, ActionBlocked, captureUnrecorded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			final, apply, bs := restoreActions([]*unstructured.Unstructured{cm, svc}, tt.planned, tt.actions, tt.entries, tt.unrecorded, tt.blockers)
			var got []string
			for _, o := range apply {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			var ids []string
			for _, b := range bs {
				ids = append(ids, b.ID)
			}
			if diff := cmp.Diff(tt.wantApply, got); diff != "" {
				t.Errorf("restoreActions(%s) applies (-want +got):\n%s", tt.name, diff)
			}
			if final[key(svc)] != tt.wantAction || strings.Join(ids, ",") != tt.wantIDs {
				t.Errorf("restoreActions(%s) = Service %s, blockers %v; want %s, %s", tt.name, final[key(svc)], ids, tt.wantAction, tt.wantIDs)
			}
		})
	}
}

// ratioBomb expands to about 300,000 nodes from about 3,500 as written:
// under the alias ratio sigs.k8s.io/yaml's decoder refuses (99% of the
// decoded nodes up to 400,000), so it decodes each such 15 KB file in
// full, and a capture of 2,000 of them holds 600 million nodes.
func ratioBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n")
	b.WriteString("  pad: [" + strings.TrimSuffix(strings.Repeat("a,", 3300), ",") + "]\n")
	b.WriteString("  l0: &l0 [" + strings.TrimSuffix(strings.Repeat("a,", 100), ",") + "]\n")
	b.WriteString("  l1: &l1 [" + strings.TrimSuffix(strings.Repeat("*l0,", 100), ",") + "]\n")
	b.WriteString("  l2: [" + strings.TrimSuffix(strings.Repeat("*l1,", 30), ",") + "]\n")
	return b.String()
}

// TestReadCaptureAliasBomb: a capture file of nested aliases (issue 26's
// ConfigMap, and merge keys) is refused by the YAML budget before the
// decoder, which expands aliases, reads it.
func TestReadCaptureAliasBomb(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"under the decoder's alias ratio", ratioBomb()},
		{"sequence aliases", aliasBomb(5, 9)},
		{"merge keys", mergeKeyBomb(5, false)},
		{"merge key lists", mergeKeyBomb(5, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "000-configmap-bomb.yaml"), []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := ReadCapture(dir)
			var tce *TooComplexError
			if !errors.As(err, &tce) || !strings.HasSuffix(tce.File, "000-configmap-bomb.yaml") {
				t.Fatalf("ReadCapture of an alias bomb = %v, want a *TooComplexError naming 000-configmap-bomb.yaml", err)
			}
		})
	}
}
