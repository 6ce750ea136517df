package operator

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// AppSpec is the App's spec (see crd.yaml for the schema).
type AppSpec struct {
	Image                   string              `json:"image"`
	Replicas                *int32              `json:"replicas,omitempty"`
	Port                    int32               `json:"port,omitempty"`
	Host                    string              `json:"host,omitempty"`
	Env                     []EnvVar            `json:"env,omitempty"`
	Autoscaling             *Autoscaling        `json:"autoscaling,omitempty"`
	MinAvailable            *intstr.IntOrString `json:"minAvailable,omitempty"`
	Paused                  bool                `json:"paused,omitempty"`
	ProgressDeadlineSeconds *int32              `json:"progressDeadlineSeconds,omitempty"`
	PodLabels               map[string]string   `json:"podLabels,omitempty"`
	PodAnnotations          map[string]string   `json:"podAnnotations,omitempty"`
}

// EnvVar is one environment variable.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// Autoscaling configures a HorizontalPodAutoscaler.
type Autoscaling struct {
	MinReplicas                    *int32 `json:"minReplicas,omitempty"`
	MaxReplicas                    int32  `json:"maxReplicas"`
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
}

// ParseSpec reads and checks an App's spec.
func ParseSpec(app *unstructured.Unstructured) (AppSpec, error) {
	var spec AppSpec
	raw, ok := app.Object["spec"].(map[string]any)
	if !ok {
		return spec, fmt.Errorf("operator: app %s/%s has no spec", app.GetNamespace(), app.GetName())
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return spec, fmt.Errorf("operator: app %s/%s: %w", app.GetNamespace(), app.GetName(), err)
	}
	if strings.TrimSpace(spec.Image) == "" {
		return spec, fmt.Errorf("operator: app %s/%s: spec.image is empty", app.GetNamespace(), app.GetName())
	}
	if spec.Port == 0 {
		spec.Port = 8080
	}
	if spec.Autoscaling != nil && spec.Autoscaling.MinReplicas != nil && *spec.Autoscaling.MinReplicas > spec.Autoscaling.MaxReplicas {
		return spec, fmt.Errorf("operator: app %s/%s: autoscaling.minReplicas %d > maxReplicas %d", app.GetNamespace(), app.GetName(), *spec.Autoscaling.MinReplicas, spec.Autoscaling.MaxReplicas)
	}
	return spec, nil
}
