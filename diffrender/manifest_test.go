package diffrender

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestYAML(t *testing.T) {
	tests := []struct {
		name string
		obj  map[string]any
		want string
	}{
		{
			name: "nil",
			obj:  nil,
			want: "",
		},
		{
			name: "leading keys first, the rest and nested keys sorted",
			obj: map[string]any{
				"status":     map[string]any{"b": 1, "a": 2},
				"data":       map[string]any{"z": "1", "a": "2"},
				"spec":       map[string]any{"replicas": 3},
				"metadata":   map[string]any{"name": "web", "labels": map[string]any{"b": "x", "a": "y"}},
				"kind":       "Deployment",
				"apiVersion": "apps/v1",
			},
			want: unindent(`
				apiVersion: apps/v1
				kind: Deployment
				metadata:
				  labels:
				    a: "y"
				    b: x
				  name: web
				spec:
				  replicas: 3
				data:
				  a: "2"
				  z: "1"
				status:
				  a: 2
				  b: 1
				`),
		},
		{
			name: "numbers and other Go types as through JSON",
			obj: map[string]any{"spec": map[string]any{
				"float":    3.0,
				"fraction": 0.25,
				"float32":  float32(2),
				"big":      float64(1 << 60),
				"int":      7,
				"number":   json.Number("8080"),
				"decimal":  json.Number("0.5"),
				"typedMap": map[string]string{"b": "1", "a": "2"},
				"struct": struct {
					Name string `json:"name"`
				}{"web"},
				"stringish": []any{"true", "1", "2026-01-28", "", nil},
			}},
			want: unindent(`
				spec:
				  big: 1152921504606846976
				  decimal: 0.5
				  float: 3
				  float32: 2
				  fraction: 0.25
				  int: 7
				  number: 8080
				  stringish:
				  - "true"
				  - "1"
				  - "2026-01-28"
				  - ""
				  - null
				  struct:
				    name: web
				  typedMap:
				    a: "2"
				    b: "1"
				`),
		},
		{
			name: "multi-line strings as literal blocks",
			obj: map[string]any{
				"kind": "ConfigMap",
				"data": map[string]any{"app.yaml": "server:\n  listen: :8080\n"},
			},
			want: unindent(`
				kind: ConfigMap
				data:
				  app.yaml: |
				    server:
				      listen: :8080
				`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := YAML(tt.obj)
			if err != nil {
				t.Fatalf("YAML() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("YAML mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestYAMLError(t *testing.T) {
	for _, tt := range []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"infinity", map[string]any{"spec": map[string]any{"ratio": math.Inf(1)}}, "diffrender: render spec as YAML: unsupported value +Inf"},
		{"NaN in a list", map[string]any{"data": []any{"a", math.NaN()}}, "diffrender: render data as YAML: unsupported value NaN"},
		{"float32 NaN", map[string]any{"data": float32(math.NaN())}, "diffrender: render data as YAML: unsupported value NaN"},
		{"no JSON form", map[string]any{"spec": map[string]any{"c": make(chan int)}}, "diffrender: render spec as YAML: json: unsupported type: chan int"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := YAML(tt.obj)
			if err == nil || err.Error() != tt.want {
				t.Errorf("YAML() error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestManifests(t *testing.T) {
	desired := y(t, restrictDesired)
	live := y(t, defaultedLive)
	live["status"] = map[string]any{"replicas": float64(3)}
	liveHandEdited := y(t, edit(t, defaultedLive, "replicas: 3", "replicas: 5"))

	tests := []struct {
		name          string
		desired, live map[string]any
		// want checks the parts of the result the case is about.
		want func(t *testing.T, md ManifestDiff)
	}{
		{
			name:    "unchanged since applied",
			desired: desired,
			live:    live,
			want: func(t *testing.T, md ManifestDiff) {
				if !md.Diff.Equal || md.NoDesired || md.NoLive {
					t.Errorf("Equal, NoDesired, NoLive = %v, %v, %v; want true, false, false", md.Diff.Equal, md.NoDesired, md.NoLive)
				}
				if md.DesiredYAML != md.LiveYAML {
					t.Errorf("LiveYAML != DesiredYAML:\n%s", cmp.Diff(md.DesiredYAML, md.LiveYAML))
				}
				for _, s := range []string{"dnsPolicy: ClusterFirst", "namespace: shop"} {
					if !strings.Contains(md.LiveFullYAML, s) {
						t.Errorf("LiveFullYAML lacks %q", s)
					}
				}
				if strings.Contains(md.LiveFullYAML, "status:") {
					t.Errorf("LiveFullYAML has a status:\n%s", md.LiveFullYAML)
				}
			},
		},
		{
			name:    "hand edit",
			desired: desired,
			live:    liveHandEdited,
			want: func(t *testing.T, md ManifestDiff) {
				// Live (5) is before, desired (3) after: a sync takes 5 away.
				want := []UnifiedLine{{Delete, 8, 0, "  replicas: 5"}, {Insert, 0, 8, "  replicas: 3"}}
				var got []UnifiedLine
				for _, u := range md.Diff.Unified() {
					if u.Op != Equal {
						got = append(got, u)
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("changed lines mismatch (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:    "no desired state",
			desired: nil,
			live:    live,
			want: func(t *testing.T, md ManifestDiff) {
				if !md.NoDesired || md.Diff.Equal || len(md.Diff.Rows) != 0 || md.DesiredYAML != "" {
					t.Errorf("got NoDesired %v, Equal %v, %d rows, DesiredYAML %q; want true, false, 0, empty",
						md.NoDesired, md.Diff.Equal, len(md.Diff.Rows), md.DesiredYAML)
				}
				if md.LiveYAML == "" || md.LiveYAML != md.LiveFullYAML {
					t.Errorf("LiveYAML = %q, want the full live manifest %q", md.LiveYAML, md.LiveFullYAML)
				}
			},
		},
		{
			name:    "missing live object",
			desired: desired,
			live:    nil,
			want: func(t *testing.T, md ManifestDiff) {
				n := strings.Count(md.DesiredYAML, "\n")
				if !md.NoLive || md.Diff.Equal || md.Diff.Added != n || md.Diff.Removed != 0 || md.LiveYAML != "" {
					t.Errorf("got NoLive %v, Equal %v, -%d +%d, LiveYAML %q; want true, false, -0 +%d, empty",
						md.NoLive, md.Diff.Equal, md.Diff.Removed, md.Diff.Added, md.LiveYAML, n)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desiredBefore, liveBefore := deepCopy(t, tt.desired), deepCopy(t, tt.live)
			md, err := Manifests(tt.desired, tt.live)
			if err != nil {
				t.Fatalf("Manifests() error = %v", err)
			}
			tt.want(t, md)
			if diff := cmp.Diff(desiredBefore, tt.desired); diff != "" {
				t.Errorf("Manifests changed desired (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(liveBefore, tt.live); diff != "" {
				t.Errorf("Manifests changed live (-before +after):\n%s", diff)
			}
		})
	}
}

func TestManifestsRefusesSecrets(t *testing.T) {
	secret := map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata":   map[string]any{"name": "db"},
		"data":       map[string]any{"password": "aHVudGVyMg=="},
	}
	for _, tt := range []struct {
		name          string
		desired, live map[string]any
	}{
		{"desired", secret, nil},
		{"live", nil, secret},
		{"both", secret, secret},
	} {
		t.Run(tt.name, func(t *testing.T) {
			md, err := Manifests(tt.desired, tt.live)
			if !errors.Is(err, ErrSecret) {
				t.Errorf("Manifests(Secret) error = %v, want ErrSecret", err)
			}
			if strings.Contains(md.DesiredYAML+md.LiveYAML+md.LiveFullYAML, "aHVudGVyMg==") {
				t.Errorf("Manifests(Secret) leaked the data: %+v", md)
			}
		})
	}
}

func TestManifestsErrors(t *testing.T) {
	bad := map[string]any{"kind": "Widget", "spec": map[string]any{"ratio": math.NaN()}}
	ok := map[string]any{"kind": "Widget", "spec": map[string]any{"ratio": 1}}
	for _, tt := range []struct {
		name          string
		desired, live map[string]any
		wantPrefix    string
	}{
		{"desired", bad, ok, "diffrender: desired manifest: render spec as YAML: "},
		{"live", ok, bad, "diffrender: live manifest: render spec as YAML: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Manifests(tt.desired, tt.live)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantPrefix) {
				t.Errorf("Manifests() error = %v, want prefix %q", err, tt.wantPrefix)
			}
		})
	}
}

// TestManifestsIncluding: fields changed outside the operator show on the
// live side, with live's values, only when asked for.
func TestManifestsIncluding(t *testing.T) {
	desired := y(t, `
		apiVersion: apps/v1
		kind: Deployment
		metadata:
		  name: web
		  labels: {app: web}
		spec:
		  replicas: 2
		  template:
		    spec:
		      containers:
		      - name: web
		        image: web:1.0.0
		        env:
		        - {name: A, value: "1"}
		`)
	live := y(t, `
		apiVersion: apps/v1
		kind: Deployment
		metadata:
		  name: web
		  labels: {app: web, tier: front}
		  annotations: {team.example.com/owner: ops}
		spec:
		  replicas: 2
		  paused: true
		  template:
		    spec:
		      containers:
		      - name: web
		        image: web:1.0.0
		        imagePullPolicy: IfNotPresent
		        resources: {limits: {cpu: 500m}}
		        env:
		        - {name: A, value: "1"}
		status: {replicas: 2}
		`)
	extra := y(t, `
		metadata:
		  labels: {tier: not-the-live-value}
		  annotations: {team.example.com/owner: x, gone.example.com/x: y}
		spec:
		  paused: true
		  template:
		    spec:
		      containers:
		      - name: web
		        resources: {limits: {cpu: "0.5"}}
		`)
	plain, err := Manifests(desired, live)
	if err != nil || !plain.Diff.Equal {
		t.Fatalf("Manifests() = equal %v, %v; want equal (defaults and drift are not desired fields)", plain.Diff.Equal, err)
	}
	if same, err := ManifestsIncluding(desired, live, nil); err != nil || !cmp.Equal(plain, same) {
		t.Errorf("ManifestsIncluding(nil extra) differs from Manifests (%v)", err)
	}
	desiredBefore, liveBefore, extraBefore := deepCopy(t, desired), deepCopy(t, live), deepCopy(t, extra)
	md, err := ManifestsIncluding(desired, live, extra)
	if err != nil {
		t.Fatal(err)
	}
	var onlyLive []string
	for _, u := range md.Diff.Unified() {
		if u.Op == Insert {
			t.Errorf("line only in the desired state: %q", u.Text)
		}
		if u.Op == Delete {
			onlyLive = append(onlyLive, strings.TrimSpace(u.Text))
		}
	}
	want := []string{"annotations:", "team.example.com/owner: ops", "tier: front", "paused: true", "resources:", "limits:", "cpu: 500m"}
	if diff := cmp.Diff(want, onlyLive); diff != "" {
		t.Errorf("live-only lines mismatch (-want +got):\n%s\nlive side:\n%s", diff, md.LiveYAML)
	}
	if md.DesiredYAML != plain.DesiredYAML || md.Diff.Added != 0 || md.Diff.Removed != len(want) {
		t.Errorf("desired side changed or counts wrong: +%d -%d", md.Diff.Added, md.Diff.Removed)
	}
	for name, pair := range map[string][2]map[string]any{"desired": {desiredBefore, desired}, "live": {liveBefore, live}, "extra": {extraBefore, extra}} {
		if diff := cmp.Diff(pair[0], pair[1]); diff != "" {
			t.Errorf("ManifestsIncluding changed %s:\n%s", name, diff)
		}
	}
}
