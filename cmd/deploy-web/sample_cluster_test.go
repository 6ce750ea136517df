package main

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/devcluster"
)

// newAuditedSample is the sample on a control plane of its own, as the
// CLI's audited writes need it: namespaces ns and deploy-web, the config
// (sample-dev and sample-prod), the manifests and catalog committed as
// v1, and the audit store of deploy-web's namespace, where the CLI writes
// its records (and reads the freezes).
func newAuditedSample(t *testing.T) (*sample, *audit.Store) {
	t.Helper()
	c := devcluster.ForTest(t, devcluster.Options{})
	s := newSample(t)
	s.kube = kubernetes.NewForConfigOrDie(c.Config)
	s.dyn = dynamic.NewForConfigOrDie(c.Config)
	s.meta = metadata.NewForConfigOrDie(c.Config)
	for _, n := range []string{ns, "deploy-web"} {
		if _, err := s.kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.writeConfig(c.Kubeconfig)
	files := s.manifests("")
	files["catalog.json"] = s.catalog()
	s.commitFiles("v1", files)
	store, err := audit.New(s.kube.CoreV1(), s.meta, audit.Options{Namespace: "deploy-web"})
	if err != nil {
		t.Fatal(err)
	}
	return s, store
}
