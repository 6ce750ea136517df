package diffrender

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// manifestLines returns n lines shaped like a long list of containers in a
// manifest: many lines repeat (protocol: TCP, value: info), as in real
// YAML, which is what makes a line diff work.
func manifestLines(n int) []string {
	block := []string{
		"- name: app-%d",
		"  image: registry.example.com/team/app-%d:v1.%d.0",
		"  imagePullPolicy: IfNotPresent",
		"  env:",
		"  - name: LOG_LEVEL",
		"    value: info",
		"  - name: SERVICE_INDEX",
		"    value: \"%d\"",
		"  ports:",
		"  - containerPort: 8080",
		"    name: http",
		"    protocol: TCP",
		"  resources:",
		"    limits:",
		"      cpu: 500m",
		"      memory: 256Mi",
	}
	lines := make([]string, 0, n)
	for i := 0; len(lines) < n; i++ {
		for _, l := range block {
			if len(lines) == n {
				break
			}
			switch c := strings.Count(l, "%d"); c {
			case 0:
				lines = append(lines, l)
			case 1:
				lines = append(lines, fmt.Sprintf(l, i))
			default:
				lines = append(lines, fmt.Sprintf(l, i, i, i%7))
			}
		}
	}
	return lines
}

// scatteredChanges returns lines with k distinct lines, chosen at random
// with a fixed seed, edited in place.
func scatteredChanges(lines []string, k int) []string {
	out := append([]string(nil), lines...)
	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(len(out))[:k] {
		out[i] += " # edited by hand"
	}
	return out
}

func BenchmarkCompute10kLines200Changes(b *testing.B) {
	lines := manifestLines(10000)
	left := strings.Join(lines, "\n") + "\n"
	right := strings.Join(scatteredChanges(lines, 200), "\n") + "\n"
	b.ReportAllocs()
	for b.Loop() {
		d := Compute(left, right)
		if d.Added != 200 || d.Removed != 200 {
			b.Fatalf("Compute: +%d -%d, want +200 -200", d.Added, d.Removed)
		}
	}
}

// largeDeployment returns a desired Deployment with many containers, env
// vars and volumes, and its live version as the API server returns it:
// defaults, managedFields, the last-applied annotation and a status, plus
// three hand edits (replicas, an image, an env value).
func largeDeployment(b *testing.B) (desired, live map[string]any) {
	b.Helper()
	const containers, envs, volumes = 8, 40, 16
	build := func(live bool) map[string]any {
		var cs []any
		for c := range containers {
			var env []any
			for e := range envs {
				env = append(env, map[string]any{"name": fmt.Sprintf("SETTING_%d", e), "value": fmt.Sprintf("value-%d-%d", c, e)})
			}
			var mounts []any
			for v := range volumes {
				mounts = append(mounts, map[string]any{"name": fmt.Sprintf("vol-%d", v), "mountPath": fmt.Sprintf("/etc/vol-%d", v)})
			}
			port := map[string]any{"name": "http", "containerPort": float64(8080 + c)}
			probe := map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": "http"}}
			container := map[string]any{
				"name":  fmt.Sprintf("app-%d", c),
				"image": fmt.Sprintf("ghcr.io/hanzoai/app-%d:v1.2.%d", c, c),
				"args":  []any{"--listen=:8080", "--log-format=json"},
				"env":   env, "volumeMounts": mounts, "ports": []any{port},
				"readinessProbe": probe, "livenessProbe": probe,
				"resources": map[string]any{
					"requests": map[string]any{"cpu": 0.25, "memory": "128Mi"},
					"limits":   map[string]any{"cpu": float64(1), "memory": "512Mi"},
				},
			}
			if live {
				container["imagePullPolicy"] = "IfNotPresent"
				container["terminationMessagePath"] = "/dev/termination-log"
				container["terminationMessagePolicy"] = "File"
				port["protocol"] = "TCP"
				for _, p := range []string{"readinessProbe", "livenessProbe"} {
					container[p] = map[string]any{
						"httpGet":          map[string]any{"path": "/healthz", "port": "http", "scheme": "HTTP"},
						"failureThreshold": int64(3), "periodSeconds": int64(10), "successThreshold": int64(1), "timeoutSeconds": int64(1),
					}
				}
				container["resources"] = map[string]any{
					"requests": map[string]any{"cpu": "250m", "memory": "128Mi"},
					"limits":   map[string]any{"cpu": "1", "memory": "512Mi"},
				}
			}
			cs = append(cs, container)
		}
		var vols []any
		for v := range volumes {
			cm := map[string]any{"name": fmt.Sprintf("config-%d", v)}
			if live {
				cm["defaultMode"] = int64(420)
			}
			vols = append(vols, map[string]any{"name": fmt.Sprintf("vol-%d", v), "configMap": cm})
		}
		labels := map[string]any{"app.kubernetes.io/instance": "big", "app.kubernetes.io/name": "big"}
		podSpec := map[string]any{"containers": cs, "volumes": vols}
		obj := map[string]any{
			"apiVersion": "apps/v1",
			"kind":       "Deployment",
			"metadata":   map[string]any{"name": "big", "namespace": "shop", "labels": labels},
			"spec": map[string]any{
				"replicas": float64(3),
				"selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec},
			},
		}
		if live {
			podSpec["dnsPolicy"] = "ClusterFirst"
			podSpec["restartPolicy"] = "Always"
			podSpec["schedulerName"] = "default-scheduler"
			podSpec["securityContext"] = map[string]any{}
			podSpec["terminationGracePeriodSeconds"] = int64(30)
			spec := obj["spec"].(map[string]any)
			spec["progressDeadlineSeconds"] = int64(600)
			spec["revisionHistoryLimit"] = int64(10)
			spec["strategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}}
			md := obj["metadata"].(map[string]any)
			md["uid"] = "6f1c2a8e-3b7d-4e0a-9c55-0d2b8f4a7e11"
			md["resourceVersion"] = "918273"
			md["generation"] = int64(4)
			md["managedFields"] = []any{map[string]any{"manager": "kubectl-client-side-apply", "fieldsV1": spec}}
			obj["status"] = map[string]any{"replicas": int64(3), "readyReplicas": int64(3)}
		}
		return obj
	}
	desired, live = build(false), build(true)
	applied, err := json.Marshal(desired)
	if err != nil {
		b.Fatal(err)
	}
	live["metadata"].(map[string]any)["annotations"] = map[string]any{
		LastAppliedAnnotation:               string(applied),
		"deployment.kubernetes.io/revision": "4",
	}
	spec := live["spec"].(map[string]any)
	spec["replicas"] = int64(5)
	c := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[3].(map[string]any)
	c["image"] = "ghcr.io/hanzoai/app-3:v1.2.4-hotfix"
	c["env"].([]any)[17].(map[string]any)["value"] = "edited"
	return desired, live
}

func BenchmarkManifests(b *testing.B) {
	desired, live := largeDeployment(b)
	md, err := Manifests(desired, live)
	if err != nil {
		b.Fatal(err)
	}
	if md.Diff.Added != 3 || md.Diff.Removed != 3 {
		b.Fatalf("Manifests: +%d -%d, want +3 -3", md.Diff.Added, md.Diff.Removed)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Manifests(desired, live); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(md.Diff.Rows)), "rows")
}
