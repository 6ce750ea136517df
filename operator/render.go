package operator

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	"github.com/hanzoai/deploy-web/appcr"
)

// Rendered is the set of children an App asks for. Optional children are nil
// when the App does not ask for them.
type Rendered struct {
	Deployment *appsv1ac.DeploymentApplyConfiguration
	Service    *corev1ac.ServiceApplyConfiguration
	Ingress    *networkingv1ac.IngressApplyConfiguration
	HPA        *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration
	PDB        *policyv1ac.PodDisruptionBudgetApplyConfiguration
	ConfigMap  *corev1ac.ConfigMapApplyConfiguration
}

// Render turns an App into its children: named after the App, labelled with
// the instance label, owned by the App, each annotated with the
// last-applied-configuration of what was rendered. It is a pure function.
func Render(app *unstructured.Unstructured, spec AppSpec) (Rendered, error) {
	name, ns := app.GetName(), app.GetNamespace()
	labels := map[string]string{
		appcr.InstanceLabel:  name,
		appcr.NameLabel:      name,
		appcr.ManagedByLabel: appcr.OperatorManager,
	}
	if tag := appcr.ImageTag(spec.Image); tag != "" && len(tag) <= 63 && validLabelValue(tag) {
		labels[appcr.VersionLabel] = tag
	}
	owner := metav1ac.OwnerReference().
		WithAPIVersion(app.GetAPIVersion()).WithKind(app.GetKind()).
		WithName(name).WithUID(app.GetUID()).
		WithController(true).WithBlockOwnerDeletion(true)
	selector := map[string]string{appcr.InstanceLabel: name}

	var r Rendered

	container := corev1ac.Container().
		WithName(name).
		WithImage(spec.Image).
		WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(spec.Port).WithProtocol(corev1.ProtocolTCP)).
		WithReadinessProbe(corev1ac.Probe().WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/healthz").WithPort(intstr.FromString("http")))).
		WithResources(corev1ac.ResourceRequirements().WithRequests(corev1.ResourceList{
			corev1.ResourceCPU:    mustQuantity("50m"),
			corev1.ResourceMemory: mustQuantity("64Mi"),
		}))
	if len(spec.Env) > 0 {
		data := map[string]string{}
		for _, e := range spec.Env {
			data[e.Name] = e.Value
		}
		r.ConfigMap = corev1ac.ConfigMap(name, ns).WithLabels(labels).WithOwnerReferences(owner).WithData(data)
		container = container.WithEnvFrom(corev1ac.EnvFromSource().WithConfigMapRef(corev1ac.ConfigMapEnvSource().WithName(name)))
	}

	podLabels := maps.Clone(spec.PodLabels)
	if podLabels == nil {
		podLabels = map[string]string{}
	}
	maps.Copy(podLabels, map[string]string{appcr.InstanceLabel: name, appcr.NameLabel: name})
	tmpl := corev1ac.PodTemplateSpec().
		WithLabels(podLabels).
		WithSpec(corev1ac.PodSpec().WithContainers(container))
	if len(spec.PodAnnotations) > 0 {
		tmpl = tmpl.WithAnnotations(spec.PodAnnotations)
	}
	dep := appsv1ac.Deployment(name, ns).
		WithLabels(labels).
		WithOwnerReferences(owner).
		WithSpec(appsv1ac.DeploymentSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector)).
			WithRevisionHistoryLimit(10).
			WithTemplate(tmpl))
	if spec.Autoscaling == nil {
		replicas := int32(1)
		if spec.Replicas != nil {
			replicas = *spec.Replicas
		}
		dep.Spec.WithReplicas(replicas)
	}
	if spec.Paused {
		dep.Spec.WithPaused(true)
	}
	if spec.ProgressDeadlineSeconds != nil {
		dep.Spec.WithProgressDeadlineSeconds(*spec.ProgressDeadlineSeconds)
	}
	r.Deployment = dep

	r.Service = corev1ac.Service(name, ns).
		WithLabels(labels).
		WithOwnerReferences(owner).
		WithSpec(corev1ac.ServiceSpec().
			WithSelector(selector).
			WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80).WithTargetPort(intstr.FromString("http")).WithProtocol(corev1.ProtocolTCP)))

	if spec.Host != "" {
		r.Ingress = networkingv1ac.Ingress(name, ns).
			WithLabels(labels).
			WithOwnerReferences(owner).
			WithSpec(networkingv1ac.IngressSpec().WithRules(
				networkingv1ac.IngressRule().WithHost(spec.Host).WithHTTP(
					networkingv1ac.HTTPIngressRuleValue().WithPaths(
						networkingv1ac.HTTPIngressPath().WithPath("/").WithPathType("Prefix").WithBackend(
							networkingv1ac.IngressBackend().WithService(
								networkingv1ac.IngressServiceBackend().WithName(name).WithPort(
									networkingv1ac.ServiceBackendPort().WithName("http"))))))))
	}
	if a := spec.Autoscaling; a != nil {
		hpa := autoscalingv2ac.HorizontalPodAutoscalerSpec().
			WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion("apps/v1").WithKind("Deployment").WithName(name)).
			WithMaxReplicas(a.MaxReplicas)
		if a.MinReplicas != nil {
			hpa.WithMinReplicas(*a.MinReplicas)
		}
		target := int32(80)
		if a.TargetCPUUtilizationPercentage != nil {
			target = *a.TargetCPUUtilizationPercentage
		}
		hpa.WithMetrics(autoscalingv2ac.MetricSpec().WithType("Resource").WithResource(
			autoscalingv2ac.ResourceMetricSource().WithName(corev1.ResourceCPU).WithTarget(
				autoscalingv2ac.MetricTarget().WithType("Utilization").WithAverageUtilization(target))))
		r.HPA = autoscalingv2ac.HorizontalPodAutoscaler(name, ns).WithLabels(labels).WithOwnerReferences(owner).WithSpec(hpa)
	}
	if spec.MinAvailable != nil {
		r.PDB = policyv1ac.PodDisruptionBudget(name, ns).
			WithLabels(labels).
			WithOwnerReferences(owner).
			WithSpec(policyv1ac.PodDisruptionBudgetSpec().
				WithMinAvailable(*spec.MinAvailable).
				WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector)))
	}

	// Annotate each child with what was rendered, as kubectl apply does.
	for _, o := range r.objects() {
		if err := annotateLastApplied(o); err != nil {
			return Rendered{}, err
		}
	}
	return r, nil
}

// objects returns the rendered children as annotation setters over their
// JSON encodings.
func (r Rendered) objects() []lastApplied {
	var out []lastApplied
	if r.Deployment != nil {
		out = append(out, lastApplied{r.Deployment, func(m map[string]string) { r.Deployment.WithAnnotations(m) }})
	}
	if r.Service != nil {
		out = append(out, lastApplied{r.Service, func(m map[string]string) { r.Service.WithAnnotations(m) }})
	}
	if r.Ingress != nil {
		out = append(out, lastApplied{r.Ingress, func(m map[string]string) { r.Ingress.WithAnnotations(m) }})
	}
	if r.HPA != nil {
		out = append(out, lastApplied{r.HPA, func(m map[string]string) { r.HPA.WithAnnotations(m) }})
	}
	if r.PDB != nil {
		out = append(out, lastApplied{r.PDB, func(m map[string]string) { r.PDB.WithAnnotations(m) }})
	}
	if r.ConfigMap != nil {
		out = append(out, lastApplied{r.ConfigMap, func(m map[string]string) { r.ConfigMap.WithAnnotations(m) }})
	}
	return out
}

type lastApplied struct {
	obj any
	set func(map[string]string)
}

func annotateLastApplied(o lastApplied) error {
	b, err := json.Marshal(o.obj)
	if err != nil {
		return fmt.Errorf("operator: encode rendered object: %w", err)
	}
	o.set(map[string]string{appcr.LastAppliedAnnotation: string(b) + "\n"})
	return nil
}

func validLabelValue(s string) bool {
	for i, c := range s {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(s)-1 || !slices.Contains([]rune{'-', '_', '.'}, c)) {
			return false
		}
	}
	return true
}
