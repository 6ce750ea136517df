package deployplan

import (
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAppliedByEngine(t *testing.T) {
	tests := []struct {
		mfs  []metav1.ManagedFieldsEntry
		want bool
	}{
		{nil, false},
		{[]metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply}}, true},
		// The lock Lease and the history are created (Update), not applied.
		{[]metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate}}, false},
		{[]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}, false},
	}
	for _, tt := range tests {
		if got := appliedByEngine(tt.mfs); got != tt.want {
			t.Errorf("appliedByEngine(%+v) = %t, want %t", tt.mfs, got, tt.want)
		}
	}
}

func TestSharedNamespace(t *testing.T) {
	cfg := &envconfig.Config{Environments: []envconfig.Environment{
		{Name: "dev", Namespace: "apps", Cluster: envconfig.ClusterRef{Context: "c1"}},
		{Name: "qa", Namespace: "apps", Cluster: envconfig.ClusterRef{Context: "c1"}},
		{Name: "other-cluster", Namespace: "apps", Cluster: envconfig.ClusterRef{Context: "c2"}},
		{Name: "other-ns", Namespace: "qa", Cluster: envconfig.ClusterRef{Context: "c1"}},
	}}
	if got := SharedNamespace(cfg, &cfg.Environments[0]); strings.Join(got, ",") != "qa" {
		t.Errorf("SharedNamespace(dev) = %v, want [qa]", got)
	}
	if got := SharedNamespace(cfg, &cfg.Environments[3]); len(got) != 0 {
		t.Errorf("SharedNamespace(other-ns) = %v, want none", got)
	}
}

func TestNewJobWarnings(t *testing.T) {
	jobs := map[string]JobReplacement{
		"a": {Job: "once", Result: JobNotFound},                      // runs at once: warned
		"b": {Job: "template", Result: JobNotFound, Suspended: true}, // suspended: quiet
		"c": {Job: "listed", Result: JobNotFound, Allowlisted: true}, // allowlisted: quiet
		"d": {Job: "live", Result: JobNotNeeded},                     // exists already
	}
	got := newJobWarnings(jobs)
	if len(got) != 1 || !strings.Contains(got[0], "Job once") || !strings.Contains(got[0], "runs at once") {
		t.Errorf("newJobWarnings = %q, want one warning about Job once", got)
	}
}
