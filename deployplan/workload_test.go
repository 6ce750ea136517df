package deployplan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hanzoai/deploy-web/envconfig"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func objJSON(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// TestImageGatesReadEveryPodTemplate: an object of any kind that carries
// containers has every image checked (containers, init and ephemeral, at
// any depth), and one whose containers cannot be read is refused.
func TestImageGatesReadEveryPodTemplate(t *testing.T) {
	const good = "registry.example.com/acme/api:" + commitA
	const evil = "evil.example/miner:1"
	tests := []struct {
		name string
		obj  string
		// images is what WorkloadOf reads, in order.
		images []string
		want   []string
	}{
		{"ReplicationController", `{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"rc"},"spec":{"template":{"spec":{"containers":[{"name":"m","image":"` + evil + `"}]}}}}`,
			[]string{evil}, []string{"image-not-in-catalog:ReplicationController/rc/m"}},
		{"custom resource with a pod spec deep inside", `{"apiVersion":"example.com/v1","kind":"Runner","metadata":{"name":"r"},"spec":{"workload":{"podSpec":{"containers":[{"name":"ok","image":"` + good + `"},{"name":"m","image":"` + evil + `"}]}}}}`,
			[]string{good, evil}, []string{"image-not-in-catalog:Runner/r/m"}},
		{"init and ephemeral containers of a Deployment", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api"},"spec":{"template":{"spec":{"initContainers":[{"name":"i","image":"` + evil + `"}],"containers":[{"name":"api","image":"` + good + `"}],"ephemeralContainers":[{"name":"e","image":"busybox:1"}]}}}}`,
			[]string{evil, good, "busybox:1"}, []string{"image-not-in-catalog:Deployment/api/i,Deployment/api/e"}},
		{"CronJob's job template", `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"m","image":"` + evil + `"}]}}}}}}`,
			[]string{evil}, []string{"image-not-in-catalog:CronJob/c/m"}},
		{"containers as a string", `{"apiVersion":"example.com/v1","kind":"Runner","metadata":{"name":"r"},"spec":{"containers":"` + evil + `"}}`,
			nil, []string{"unknown-workload:Runner/r"}},
		{"container without an image", `{"apiVersion":"example.com/v1","kind":"Runner","metadata":{"name":"r"},"spec":{"pod":{"initContainers":[{"name":"m","imageRef":"` + evil + `"}]}}}`,
			nil, []string{"unknown-workload:Runner/r"}},
		{"image not a string", `{"apiVersion":"example.com/v1","kind":"Runner","metadata":{"name":"r"},"spec":{"containers":[{"name":"m","image":{"repo":"evil.example/miner"}}]}}`,
			nil, []string{"unknown-workload:Runner/r"}},
		{"a Deployment whose containers are not objects", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":["` + evil + `"]}}}}`,
			nil, []string{"unknown-workload:Deployment/d"}},
		{"a ConfigMap's data is never a pod spec", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"containers":"` + evil + `"}}`,
			nil, []string{}},
		{"annotations are never a pod spec", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","annotations":{"containers":"x"}},"spec":{"template":{"metadata":{"annotations":{"containers":"x"}}}}}`,
			nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := objJSON(t, tt.obj)
			var workloads []Workload
			var images []string
			if w, ok := WorkloadOf(o); ok {
				workloads = append(workloads, w)
				for _, c := range w.Containers {
					images = append(images, c.Image)
				}
			}
			if diff := cmp.Diff(tt.images, images); diff != "" {
				t.Errorf("WorkloadOf(%s) images (-want +got):\n%s", tt.name, diff)
			}
			got := ids(dedupeBlockers(append(SourceChecks(workloads, testCatalog(true), envconfig.EnvMirrors{}), WorkloadCheck([]*unstructured.Unstructured{o})...)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("blockers of %s (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestWorkloadCheckNamesThePath: the refusal names the object and the
// field at fault.
func TestWorkloadCheckNamesThePath(t *testing.T) {
	o := objJSON(t, `{"apiVersion":"example.com/v1","kind":"Runner","metadata":{"name":"r"},"spec":{"workload":[{"podSpec":{"containers":[{"name":"m","image":3}]}}]}}`)
	bs := WorkloadCheck([]*unstructured.Unstructured{o})
	if len(bs) != 1 || !strings.Contains(bs[0].Message, "Runner/r (example.com/v1)") || !strings.Contains(bs[0].Message, "spec.workload[0].podSpec.containers[0].image is number") {
		t.Errorf("WorkloadCheck = %+v, want one blocker naming Runner/r and spec.workload[0].podSpec.containers[0].image", bs)
	}
}

// TestWorkloadCheckImageVolume: an image volume (the kubelet pulls
// volumes[].image.reference and a container can run its files) is no
// container's image, so no image gate sees it: the object is refused,
// naming the volume, in any pod template.
func TestWorkloadCheckImageVolume(t *testing.T) {
	tests := []struct{ name, obj, wantPath string }{
		{"Deployment", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w"},"spec":{"template":{"spec":{
			"containers":[{"name":"c","image":"reg.example/ok:1","command":["/tools/run"],"volumeMounts":[{"name":"t","mountPath":"/tools"}]}],
			"volumes":[{"name":"cfg","configMap":{"name":"c"}},{"name":"t","image":{"reference":"evil.example/tools:latest"}}]}}}}`,
			"spec.template.spec.volumes[1].image"},
		{"CronJob", `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"j"},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{
			"containers":[{"name":"c","image":"reg.example/ok:1"}],"volumes":[{"name":"t","image":{"reference":"evil.example/tools:latest"}}]}}}}}}`,
			"spec.jobTemplate.spec.template.spec.volumes[0].image"},
		{"custom resource", `{"apiVersion":"example.com/v1","kind":"Runner","metadata":{"name":"r"},"spec":{"podSpec":{
			"initContainers":[{"name":"i","image":"reg.example/ok:1"}],"volumes":[{"name":"t","image":{"reference":"evil.example/tools:latest"}}]}}}`,
			"spec.podSpec.volumes[0].image"},
	}
	for _, tt := range tests {
		bs := WorkloadCheck([]*unstructured.Unstructured{objJSON(t, tt.obj)})
		if len(bs) != 1 || !strings.Contains(bs[0].Message, tt.wantPath+" is an image volume") {
			t.Errorf("WorkloadCheck(%s with an image volume) = %+v, want one blocker naming %s", tt.name, bs, tt.wantPath)
		}
		if _, ok := WorkloadOf(objJSON(t, tt.obj)); ok {
			t.Errorf("WorkloadOf(%s with an image volume) = ok, want not a readable workload", tt.name)
		}
	}
	// Volumes of other types are not refused.
	plain := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w"},"spec":{"template":{"spec":{
		"containers":[{"name":"c","image":"reg.example/ok:1"}],"volumes":[{"name":"cfg","configMap":{"name":"c"}}]}}}}`
	if bs := WorkloadCheck([]*unstructured.Unstructured{objJSON(t, plain)}); len(bs) != 0 {
		t.Errorf("WorkloadCheck(a Deployment with a configMap volume) = %+v, want none", bs)
	}
}
