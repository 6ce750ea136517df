package objrules

import (
	"fmt"
	"strings"
)

// HealthItem is one resource of an application, with its health as returned
// by HealthOf; an empty Health.Status means the resource has no health.
type HealthItem struct {
	Group, Kind, Namespace, Name string
	Health                       Health
}

// healthMaxCulprits is how many culprits an aggregate message names.
const healthMaxCulprits = 3

// AggregateHealth returns the health of an application: the worst status
// among items, which are the App CR and its depth-1 children (callers pass
// only depth-1 children, never ReplicaSets or Pods: as in ArgoCD health is
// not inherited from grandchildren). Items with no health (empty status) are
// skipped; with none left the application is Healthy.
//
// If hasWorkload is false the workload does not exist and the application is
// Missing, with the message "<workloadRef> does not exist"; workloadRef names
// the workload as it should be shown, e.g. "Deployment ns/web".
//
// Unless the application is Healthy, the message names, in the order of
// items, the first 3 culprits (items whose status equals the worst) with
// their messages, e.g. "Caused by apps/Deployment:ns/web (1 of 3 updated),
// v1/Service:ns/web, v1/PersistentVolumeClaim:ns/data and 2 more".
func AggregateHealth(items []HealthItem, hasWorkload bool, workloadRef string) Health {
	if !hasWorkload {
		if workloadRef == "" {
			workloadRef = "The workload"
		}
		return Health{Status: HealthMissing, Message: workloadRef + " does not exist"}
	}
	var worst HealthStatus
	for _, it := range items {
		if s := it.Health.Status; s != "" && (worst == "" || s.Worse(worst)) {
			worst = s
		}
	}
	if worst == "" || worst == HealthHealthy {
		return Health{Status: HealthHealthy}
	}
	culprits, more := HealthCulprits(worst, items, func(it HealthItem) HealthStatus { return it.Health.Status }, healthMaxCulprits)
	named := make([]string, len(culprits))
	for i, it := range culprits {
		named[i] = healthCulprit(it)
	}
	msg := "Caused by " + strings.Join(named, ", ")
	if more > 0 {
		msg += fmt.Sprintf(" and %d more", more)
	}
	return Health{Status: worst, Message: msg}
}

// HealthCulprits returns the items that cause an application's health st,
// as AggregateHealth names them: those whose status (statusOf) is st, in
// their order, at most max of them, and how many more there are. None when
// st is Healthy or empty: a healthy application has no culprits.
func HealthCulprits[T any](st HealthStatus, items []T, statusOf func(T) HealthStatus, max int) ([]T, int) {
	if st == "" || st == HealthHealthy {
		return nil, 0
	}
	var out []T
	more := 0
	for _, it := range items {
		if statusOf(it) != st {
			continue
		}
		if len(out) == max {
			more++
			continue
		}
		out = append(out, it)
	}
	return out, more
}

// healthCulprit names an item as group/Kind:namespace/name (v1/Kind for the
// core group) followed by its message in parentheses.
func healthCulprit(it HealthItem) string {
	group := it.Group
	if group == "" {
		group = "v1"
	}
	name := it.Name
	if it.Namespace != "" {
		name = it.Namespace + "/" + it.Name
	}
	s := group + "/" + it.Kind + ":" + name
	if it.Health.Message != "" {
		s += " (" + it.Health.Message + ")"
	}
	return s
}
