package diffrender

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// parse decodes a YAML manifest the way sigs.k8s.io/yaml does for callers
// (numbers as float64); "" is nil.
func parse(t *testing.T, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("parse YAML: %v\n%s", err, s)
	}
	return m
}

// unindent removes the common tab indentation of a raw string literal, so
// that YAML can be written indented inside a table.
func unindent(s string) string {
	lines := strings.Split(strings.TrimPrefix(s, "\n"), "\n")
	prefix := ""
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			prefix = l[:len(l)-len(strings.TrimLeft(l, "\t"))]
			break
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	return strings.Join(lines, "\n")
}

// y parses an indented YAML literal.
func y(t *testing.T, s string) map[string]any {
	t.Helper()
	return parse(t, unindent(s))
}

// deepCopy copies a JSON-shaped value through JSON, independently of the
// package's own copy, to check that functions leave their input alone.
func deepCopy(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// scribble overwrites every map entry and list element of v in place, so a
// result that shares memory with an input shows up as a changed input.
func scribble(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			scribble(e)
			v[k] = "scribbled"
		}
	case []any:
		for i, e := range v {
			scribble(e)
			v[i] = "scribbled"
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name    string
		in, out string
	}{
		{
			name: "status",
			in: `
				kind: Deployment
				metadata: {name: web}
				status: {replicas: 3}
				`,
			out: `
				kind: Deployment
				metadata: {name: web}
				`,
		},
		{
			name: "managedFields",
			in: `
				metadata:
				  name: web
				  managedFields: [{manager: kubectl, operation: Update}]
				`,
			out: `metadata: {name: web}`,
		},
		{
			name: "resourceVersion",
			in:   `metadata: {name: web, resourceVersion: "42"}`,
			out:  `metadata: {name: web}`,
		},
		{
			name: "uid",
			in:   `metadata: {name: web, uid: 6f1c2a8e-3b7d-4e0a-9c55-0d2b8f4a7e11}`,
			out:  `metadata: {name: web}`,
		},
		{
			name: "generation",
			in:   `metadata: {name: web, generation: 7}`,
			out:  `metadata: {name: web}`,
		},
		{
			name: "creationTimestamp",
			in:   `metadata: {name: web, creationTimestamp: "2026-03-02T09:14:07Z"}`,
			out:  `metadata: {name: web}`,
		},
		{
			name: "null creationTimestamp of a generated manifest",
			in:   `metadata: {name: web, creationTimestamp: null}`,
			out:  `metadata: {name: web}`,
		},
		{
			name: "selfLink",
			in:   `metadata: {name: web, selfLink: /apis/apps/v1/namespaces/shop/deployments/web}`,
			out:  `metadata: {name: web}`,
		},
		{
			name: "last-applied-configuration annotation",
			in: `
				metadata:
				  name: web
				  annotations:
				    kubectl.kubernetes.io/last-applied-configuration: '{"kind":"Deployment"}'
				    team: payments
				`,
			out: `
				metadata:
				  name: web
				  annotations: {team: payments}
				`,
		},
		{
			name: "deployment revision annotation",
			in: `
				metadata:
				  name: web
				  annotations: {deployment.kubernetes.io/revision: "4", team: payments}
				`,
			out: `
				metadata:
				  name: web
				  annotations: {team: payments}
				`,
		},
		{
			name: "annotations emptied by the removals",
			in: `
				metadata:
				  name: web
				  annotations:
				    deployment.kubernetes.io/revision: "4"
				    kubectl.kubernetes.io/last-applied-configuration: '{}'
				`,
			out: `metadata: {name: web}`,
		},
		{
			name: "empty and null labels and annotations",
			in:   `metadata: {name: web, labels: {}, annotations: null}`,
			out:  `metadata: {name: web}`,
		},
		{
			name: "meaningful metadata and nested fields kept",
			in: `
				metadata:
				  name: web
				  namespace: shop
				  labels: {app: web}
				  ownerReferences: [{kind: App, name: web}]
				  deletionTimestamp: "2026-03-02T09:14:07Z"
				spec:
				  template:
				    metadata: {creationTimestamp: null, annotations: {}}
				`,
			out: `
				metadata:
				  name: web
				  namespace: shop
				  labels: {app: web}
				  ownerReferences: [{kind: App, name: web}]
				  deletionTimestamp: "2026-03-02T09:14:07Z"
				spec:
				  template:
				    metadata: {creationTimestamp: null, annotations: {}}
				`,
		},
		{
			name: "no metadata",
			in:   `{kind: List, items: [], status: {}}`,
			out:  `{kind: List, items: []}`,
		},
		{
			name: "nil",
			in:   ``,
			out:  ``,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := y(t, tt.in)
			before := deepCopy(t, in)
			got := Normalize(in)
			if diff := cmp.Diff(y(t, tt.out), got); diff != "" {
				t.Errorf("Normalize mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("Normalize mutated its input (-before +after):\n%s", diff)
			}
			scribble(got)
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("Normalize result shares memory with its input (-before +after):\n%s", diff)
			}
		})
	}
}

// defaultedLive is a live Deployment as the API server returns it for
// restrictDesired: every server and controller default filled in.
const restrictDesired = `
	apiVersion: apps/v1
	kind: Deployment
	metadata:
	  name: web
	  labels: {app: web}
	spec:
	  replicas: 3
	  selector:
	    matchLabels: {app: web}
	  template:
	    metadata:
	      labels: {app: web}
	    spec:
	      containers:
	      - name: web
	        image: ghcr.io/hanzoai/web:v1.0.0
	        env:
	        - {name: LOG_LEVEL, value: info}
	        - {name: REGION, value: eu-west-1}
	        ports:
	        - containerPort: 8080
	`

const defaultedLive = `
	apiVersion: apps/v1
	kind: Deployment
	metadata:
	  name: web
	  namespace: shop
	  labels: {app: web, pod-template-hash: 7d9f8b6c5d}
	spec:
	  progressDeadlineSeconds: 600
	  replicas: 3
	  revisionHistoryLimit: 10
	  selector:
	    matchLabels: {app: web}
	  strategy:
	    type: RollingUpdate
	    rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}
	  template:
	    metadata:
	      creationTimestamp: null
	      labels: {app: web}
	    spec:
	      containers:
	      - name: web
	        image: ghcr.io/hanzoai/web:v1.0.0
	        imagePullPolicy: IfNotPresent
	        env:
	        - {name: LOG_LEVEL, value: info}
	        - {name: REGION, value: eu-west-1}
	        ports:
	        - {containerPort: 8080, protocol: TCP}
	        resources: {}
	        terminationMessagePath: /dev/termination-log
	        terminationMessagePolicy: File
	      dnsPolicy: ClusterFirst
	      restartPolicy: Always
	      schedulerName: default-scheduler
	      securityContext: {}
	      terminationGracePeriodSeconds: 30
	`

// edit returns the YAML s with each old string replaced by its new one,
// failing the test if one is missing, so that table cases read as edits.
func edit(t *testing.T, s string, oldnew ...string) string {
	t.Helper()
	for i := 0; i < len(oldnew); i += 2 {
		if !strings.Contains(s, oldnew[i]) {
			t.Fatalf("edit: %q not found", oldnew[i])
		}
		s = strings.Replace(s, oldnew[i], oldnew[i+1], 1)
	}
	return s
}

func TestRestrictToDesired(t *testing.T) {
	tests := []struct {
		name                string
		desired, live, want string
	}{
		{
			name:    "server defaults ignored",
			desired: restrictDesired,
			live:    defaultedLive,
			want:    restrictDesired,
		},
		{
			name:    "replicas edited by hand",
			desired: restrictDesired,
			live:    edit(t, defaultedLive, "replicas: 3", "replicas: 5"),
			want:    edit(t, restrictDesired, "replicas: 3", "replicas: 5"),
		},
		{
			name:    "image edited by hand",
			desired: restrictDesired,
			live:    edit(t, defaultedLive, "web:v1.0.0", "web:v1.0.1-hotfix"),
			want:    edit(t, restrictDesired, "web:v1.0.0", "web:v1.0.1-hotfix"),
		},
		{
			name:    "env value edited by hand",
			desired: restrictDesired,
			live:    edit(t, defaultedLive, "value: info", "value: debug"),
			want:    edit(t, restrictDesired, "value: info", "value: debug"),
		},
		{
			name:    "env var removed by hand",
			desired: restrictDesired,
			live:    edit(t, defaultedLive, "\t        - {name: LOG_LEVEL, value: info}\n", ""),
			want:    edit(t, restrictDesired, "\t        - {name: LOG_LEVEL, value: info}\n", ""),
		},
		{
			name:    "env var added by hand",
			desired: restrictDesired,
			live:    edit(t, defaultedLive, "- {name: REGION", "- {name: DEBUG, value: \"1\"}\n\t        - {name: REGION"),
			want:    edit(t, restrictDesired, "- {name: REGION", "- {name: DEBUG, value: \"1\"}\n\t        - {name: REGION"),
		},
		{
			name:    "env reordered: live order, each var paired by name",
			desired: restrictDesired,
			live: edit(t, defaultedLive,
				"- {name: LOG_LEVEL, value: info}\n\t        - {name: REGION, value: eu-west-1}",
				"- {name: REGION, value: eu-west-1}\n\t        - {name: LOG_LEVEL, value: info}"),
			want: edit(t, restrictDesired,
				"- {name: LOG_LEVEL, value: info}\n\t        - {name: REGION, value: eu-west-1}",
				"- {name: REGION, value: eu-west-1}\n\t        - {name: LOG_LEVEL, value: info}"),
		},
		{
			name:    "container added by hand shows whole",
			desired: restrictDesired,
			live: edit(t, defaultedLive, "      dnsPolicy:", `      - name: debug
	        image: busybox:1.36
	        imagePullPolicy: IfNotPresent
	        terminationMessagePath: /dev/termination-log
	      dnsPolicy:`),
			want: restrictDesired + `      - name: debug
	        image: busybox:1.36
	        imagePullPolicy: IfNotPresent
	        terminationMessagePath: /dev/termination-log
	`,
		},
		{
			name:    "field desired sets missing from live",
			desired: restrictDesired,
			live:    edit(t, defaultedLive, "\t  replicas: 3\n", ""),
			want:    edit(t, restrictDesired, "\t  replicas: 3\n", ""),
		},
		{
			name:    "lists without names pair by index; extra live elements kept",
			desired: `spec: {tolerations: [{key: a, operator: Exists}, {key: b, operator: Exists}]}`,
			live:    `spec: {tolerations: [{key: a, operator: Exists, effect: NoSchedule}, {key: c, operator: Exists}, {key: x, tolerationSeconds: 300}]}`,
			want:    `spec: {tolerations: [{key: a, operator: Exists}, {key: c, operator: Exists}, {key: x, tolerationSeconds: 300}]}`,
		},
		{
			name:    "unnamed ports pair by containerPort",
			desired: `ports: [{containerPort: 8080}, {containerPort: 9090}]`,
			live:    `ports: [{containerPort: 9090, protocol: TCP}, {containerPort: 8080, protocol: TCP}]`,
			want:    `ports: [{containerPort: 9090}, {containerPort: 8080}]`,
		},
		{
			name:    "duplicate names fall back to the next key",
			desired: `volumeMounts: [{name: cfg, mountPath: /a, subPath: a}, {name: cfg, mountPath: /b, subPath: b}]`,
			live:    `volumeMounts: [{name: cfg, mountPath: /b, subPath: b, readOnly: true}, {name: cfg, mountPath: /a, subPath: a}]`,
			want:    `volumeMounts: [{name: cfg, mountPath: /b, subPath: b}, {name: cfg, mountPath: /a, subPath: a}]`,
		},
		{
			name:    "conditions pair by type",
			desired: `readinessGates: [{conditionType: x, type: A}, {type: B}]`,
			live:    `readinessGates: [{type: B, extra: 1}, {conditionType: x, type: A, extra: 2}]`,
			want:    `readinessGates: [{type: B}, {conditionType: x, type: A}]`,
		},
		{
			name:    "list of scalars is atomic",
			desired: `args: [--a, --b]`,
			live:    `args: [--a, --b, --c]`,
			want:    `args: [--a, --b, --c]`,
		},
		{
			name:    "type changed: live value kept",
			desired: `spec: {selector: {app: web}, x: [1]}`,
			live:    `spec: {selector: web, x: {a: 1}}`,
			want:    `spec: {selector: web, x: {a: 1}}`,
		},
		{
			name:    "resource quantities compared by value",
			desired: `resources: {requests: {cpu: 0.5, memory: 1Gi}, limits: {cpu: 1, memory: 2Gi, nvidia.com/gpu: 1}}`,
			live:    `resources: {requests: {cpu: 500m, memory: "1073741824"}, limits: {cpu: "1", memory: 3Gi, nvidia.com/gpu: "1"}}`,
			want:    `resources: {requests: {cpu: 0.5, memory: 1Gi}, limits: {cpu: 1, memory: 3Gi, nvidia.com/gpu: 1}}`,
		},
		{
			name:    "quantity outside limits and requests compared as text",
			desired: `{env: [{name: CPU, value: "0.5"}], emptyDir: {sizeLimit: 1Gi}}`,
			live:    `{env: [{name: CPU, value: 500m}], emptyDir: {sizeLimit: 1024Mi}}`,
			want:    `{env: [{name: CPU, value: 500m}], emptyDir: {sizeLimit: 1Gi}}`,
		},
		{
			name:    "limits that are not quantities (a LimitRange)",
			desired: `spec: {limits: [{type: Container, max: {cpu: "2"}}]}`,
			live:    `spec: {limits: [{type: Container, max: {cpu: "2"}, default: {cpu: 500m}}]}`,
			want:    `spec: {limits: [{type: Container, max: {cpu: "2"}}]}`,
		},
		{
			name:    "quantity fields holding other values",
			desired: `{storage: {class: fast}, requests: {cpu: [1], memory: lots}}`,
			live:    `{storage: {class: fast, size: 1}, requests: {cpu: [2], memory: lots}}`,
			want:    `{storage: {class: fast}, requests: {cpu: [2], memory: lots}}`,
		},
		{
			name:    "nil desired",
			desired: ``,
			live:    defaultedLive,
			want:    ``,
		},
		{
			name:    "nil live",
			desired: restrictDesired,
			live:    ``,
			want:    ``,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desired, live := y(t, tt.desired), y(t, tt.live)
			desiredBefore, liveBefore := deepCopy(t, desired), deepCopy(t, live)
			got := RestrictToDesired(desired, live)
			if diff := cmp.Diff(y(t, tt.want), got); diff != "" {
				t.Errorf("RestrictToDesired mismatch (-want +got):\n%s", diff)
			}
			scribble(got)
			if diff := cmp.Diff(desiredBefore, desired); diff != "" {
				t.Errorf("RestrictToDesired changed desired (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(liveBefore, live); diff != "" {
				t.Errorf("RestrictToDesired changed live (-before +after):\n%s", diff)
			}
		})
	}
}

// TestRestrictToDesiredNumberTypes pairs list elements and compares
// quantities across the number types of encoding/json (float64,
// json.Number) and of unstructured objects (int64).
func TestRestrictToDesiredNumberTypes(t *testing.T) {
	desired := map[string]any{
		"ports":     []any{map[string]any{"containerPort": float64(8080)}},
		"resources": map[string]any{"limits": map[string]any{"cpu": json.Number("2")}},
	}
	live := map[string]any{
		"ports":     []any{map[string]any{"containerPort": int64(8080), "protocol": "TCP"}},
		"resources": map[string]any{"limits": map[string]any{"cpu": "2"}},
	}
	want := map[string]any{
		"ports":     []any{map[string]any{"containerPort": int64(8080)}},
		"resources": map[string]any{"limits": map[string]any{"cpu": json.Number("2")}},
	}
	if diff := cmp.Diff(want, RestrictToDesired(desired, live)); diff != "" {
		t.Errorf("RestrictToDesired mismatch (-want +got):\n%s", diff)
	}
}

func TestLastApplied(t *testing.T) {
	tests := []struct {
		name    string
		obj     map[string]any
		want    map[string]any
		wantErr string
	}{
		{
			name: "no metadata",
			obj:  map[string]any{"kind": "Pod"},
		},
		{
			name: "no annotation",
			obj:  map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a": "b"}}},
		},
		{
			name: "annotation",
			obj: map[string]any{"metadata": map[string]any{"annotations": map[string]any{
				LastAppliedAnnotation: `{"kind":"Deployment","spec":{"replicas":3}}` + "\n",
			}}},
			want: map[string]any{"kind": "Deployment", "spec": map[string]any{"replicas": json.Number("3")}},
		},
		{
			name: "not JSON",
			obj: map[string]any{"metadata": map[string]any{"annotations": map[string]any{
				LastAppliedAnnotation: `kind: Deployment`,
			}}},
			wantErr: "diffrender: decode kubectl.kubernetes.io/last-applied-configuration: ",
		},
		{
			name: "not a string",
			obj: map[string]any{"metadata": map[string]any{"annotations": map[string]any{
				LastAppliedAnnotation: int64(1),
			}}},
			wantErr: "diffrender: annotation kubectl.kubernetes.io/last-applied-configuration is a int64, not a string",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LastApplied(tt.obj)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("LastApplied() error = %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LastApplied() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LastApplied mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScalarKey(t *testing.T) {
	tests := []struct {
		in     any
		want   string
		scalar bool
	}{
		{"http", "http", true},
		{json.Number("8080"), "8080", true},
		{true, "true", true},
		{float64(8080), "8080", true},
		{0.5, "0.5", true},
		{float32(0.5), "0.5", true},
		{8080, "8080", true},
		{int64(8080), "8080", true},
		{int32(8080), "8080", true},
		{nil, "", false},
		{map[string]any{}, "", false},
		{[]any{"a"}, "", false},
	}
	for _, tt := range tests {
		if got, scalar := scalarKey(tt.in), isScalar(tt.in); got != tt.want || scalar != tt.scalar {
			t.Errorf("scalarKey(%#v), isScalar = %q, %v; want %q, %v", tt.in, got, scalar, tt.want, tt.scalar)
		}
	}
}

func TestNormalizeTypedNils(t *testing.T) {
	in := map[string]any{"spec": map[string]any(nil), "items": []any(nil)}
	want := map[string]any{"spec": map[string]any(nil), "items": []any(nil)}
	if diff := cmp.Diff(want, Normalize(in)); diff != "" {
		t.Errorf("Normalize mismatch (-want +got):\n%s", diff)
	}
}
