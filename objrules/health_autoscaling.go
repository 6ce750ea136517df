package objrules

import (
	"encoding/json"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// healthHPAWaiting is the health of an HPA that has not reported conditions
// that decide.
var healthHPAWaiting = Health{Status: HealthProgressing, Message: "Waiting to Autoscale"}

// healthHPADegraded lists, by condition type, the reasons that make an HPA
// Degraded.
var healthHPADegraded = map[string][]string{
	"AbleToScale": {"FailedGetScale", "FailedUpdateScale"},
	"ScalingActive": {"FailedGetResourceMetric", "InvalidSelector", "FailedGetObjectMetric",
		"FailedGetPodsMetric", "FailedGetExternalMetric", "FailedComputeMetricsReplicas"},
}

// HorizontalPodAutoscalerHealth returns the health of an autoscaling/v2
// HorizontalPodAutoscaler: Progressing ("Waiting to Autoscale") with no
// conditions yet; Degraded when any condition reports a failure to get or
// update the scale or to compute metrics; Healthy when AbleToScale or
// ScalingLimited is True; Progressing otherwise.
func HorizontalPodAutoscalerHealth(hpa *autoscalingv2.HorizontalPodAutoscaler) Health {
	if h, deleting := healthPendingDeletion(hpa); deleting {
		return h
	}
	conds := make([]healthCondition, 0, len(hpa.Status.Conditions))
	for _, c := range hpa.Status.Conditions {
		conds = append(conds, healthCondition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return healthHPAConditions(conds)
}

// HorizontalPodAutoscalerV1Health returns the health of an autoscaling/v1
// HorizontalPodAutoscaler by the rules of HorizontalPodAutoscalerHealth,
// reading its conditions from the autoscaling.alpha.kubernetes.io/conditions
// annotation. An annotation that is not valid JSON is Unknown with the error.
func HorizontalPodAutoscalerV1Health(hpa *autoscalingv1.HorizontalPodAutoscaler) Health {
	if h, deleting := healthPendingDeletion(hpa); deleting {
		return h
	}
	raw, ok := hpa.Annotations["autoscaling.alpha.kubernetes.io/conditions"]
	if !ok {
		return healthHPAWaiting
	}
	var conds []healthCondition
	if err := json.Unmarshal([]byte(raw), &conds); err != nil {
		return healthUnknown(fmt.Errorf("kubeview: HorizontalPodAutoscaler %s: read conditions annotation: %w", healthObjectName(hpa), err))
	}
	return healthHPAConditions(conds)
}

func healthHPAConditions(conds []healthCondition) Health {
	for _, c := range conds {
		for _, reason := range healthHPADegraded[c.Type] {
			if c.Reason == reason {
				return Health{Status: HealthDegraded, Message: c.Message}
			}
		}
	}
	for _, c := range conds {
		if (c.Type == "AbleToScale" || c.Type == "ScalingLimited") && c.Status == string(corev1.ConditionTrue) {
			return Health{Status: HealthHealthy, Message: c.Message}
		}
	}
	return healthHPAWaiting
}
