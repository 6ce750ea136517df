package audit

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// typicalApply is the manifests of a typical 10-object apply: one App's
// Deployment, Service, Ingress, ConfigMap, HPA, PDB, ServiceAccount,
// NetworkPolicy, Secret and the App CR.
func typicalApply() []*unstructured.Unstructured {
	u := func(apiVersion, kind, name string, rest map[string]any) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{
			"name": name, "namespace": "staging",
			"labels": map[string]any{"app.kubernetes.io/instance": "web", "app.kubernetes.io/name": "web", "app.kubernetes.io/managed-by": "deploy-web"},
		}}
		for k, v := range rest {
			o[k] = v
		}
		return &unstructured.Unstructured{Object: o}
	}
	podSpec := map[string]any{"serviceAccountName": "web", "containers": []any{map[string]any{
		"name": "web", "image": "registry.example.com/shop/web:1.42.0@sha256:" + fmt.Sprintf("%064d", 1),
		"ports":          []any{map[string]any{"containerPort": int64(8080), "name": "http"}},
		"env":            []any{map[string]any{"name": "MODE", "value": "production"}, map[string]any{"name": "DB_PASSWORD", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "web", "key": "password"}}}},
		"resources":      map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}, "limits": map[string]any{"memory": "256Mi"}},
		"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": "http"}},
	}}}
	return []*unstructured.Unstructured{
		u("apps/v1", "Deployment", "web", map[string]any{"spec": map[string]any{"replicas": int64(3),
			"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/instance": "web"}}, "spec": podSpec}}}),
		u("v1", "Service", "web", map[string]any{"spec": map[string]any{"selector": map[string]any{"app.kubernetes.io/instance": "web"},
			"ports": []any{map[string]any{"port": int64(80), "targetPort": "http"}}}}),
		u("networking.k8s.io/v1", "Ingress", "web", map[string]any{"spec": map[string]any{"rules": []any{map[string]any{"host": "web.staging.example.com",
			"http": map[string]any{"paths": []any{map[string]any{"path": "/", "pathType": "Prefix", "backend": map[string]any{"service": map[string]any{"name": "web", "port": map[string]any{"number": int64(80)}}}}}}}}}}),
		u("v1", "ConfigMap", "web", map[string]any{"data": map[string]any{"app.yaml": "log: info\nfeatures:\n  checkout: true\n  search: true\n"}}),
		u("autoscaling/v2", "HorizontalPodAutoscaler", "web", map[string]any{"spec": map[string]any{"minReplicas": int64(3), "maxReplicas": int64(10),
			"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}),
		u("policy/v1", "PodDisruptionBudget", "web", map[string]any{"spec": map[string]any{"minAvailable": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": "web"}}}}),
		u("v1", "ServiceAccount", "web", nil),
		u("networking.k8s.io/v1", "NetworkPolicy", "web", map[string]any{"spec": map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": "web"}},
			"ingress": []any{map[string]any{"from": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"name": "ingress"}}}}}}}}),
		u("v1", "Secret", "web", map[string]any{"stringData": map[string]any{"password": secretValue}}),
		u("hanzo.ai/v1", "App", "web", map[string]any{"spec": map[string]any{"image": "registry.example.com/shop/web:1.42.0"}}),
	}
}

// BenchmarkRecordBytes reports the stored size of the record of a typical
// 10-object apply: the record annotation, the compressed manifests and
// the head ConfigMap as JSON (what a List without the index transfers;
// etcd keeps protobuf, smaller).
func BenchmarkRecordBytes(b *testing.B) {
	s := testStore(b)
	r := testRecord("eu", "staging", testTime())
	r.Manifests, r.Objects = typicalApply(), nil
	if err := s.prepare(&r); err != nil {
		b.Fatal(err)
	}
	var head []byte
	var ann, gzn int
	for b.Loop() {
		gz, err := encodeManifests(r.Manifests)
		if err != nil {
			b.Fatal(err)
		}
		cm, parts, _, err := s.build(testSigner(), streamOf(&r).id(), 42, recordHash([]byte("prev")), &r, gz, manifestRef{})
		if err != nil || len(parts) != 0 {
			b.Fatalf("build: %v, %d parts", err, len(parts))
		}
		head, _ = json.Marshal(cm)
		ann, gzn = len(cm.Annotations[AnnotationRecord]), len(gz)
	}
	b.ReportMetric(float64(ann), "annotation-bytes")
	b.ReportMetric(float64(gzn), "manifest-gz-bytes")
	b.ReportMetric(float64(len(head)), "head-json-bytes")
}
