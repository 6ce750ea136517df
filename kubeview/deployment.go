package kubeview

import (
	"cmp"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
)

// appDeployment returns the Deployment among an App's depth-1 children: the
// one named after the App, else the first; nil when there is none.
func appDeployment(kids []child, app string) *appsv1.Deployment {
	var dep *appsv1.Deployment
	for _, ch := range kids {
		if d, ok := ch.obj.(*appsv1.Deployment); ok && (dep == nil || d.Name == app) {
			dep = d
		}
	}
	return dep
}

// revisionedReplicaSet is a ReplicaSet of a Deployment with its
// deployment.kubernetes.io/revision (0 when missing or not a number).
type revisionedReplicaSet struct {
	rs       *appsv1.ReplicaSet
	revision int64
}

// replicaSetsOf returns the cached ReplicaSets that d owns, oldest revision
// first, then by creation time.
func replicaSetsOf(d *appsv1.Deployment, src objectSource) []revisionedReplicaSet {
	var rss []revisionedReplicaSet
	for _, o := range src.byIndex(d.Namespace, "apps/ReplicaSet", IndexOwner, string(d.UID)) {
		rs, ok := o.(*appsv1.ReplicaSet)
		if !ok {
			continue
		}
		rev, _ := strconv.ParseInt(rs.Annotations["deployment.kubernetes.io/revision"], 10, 64)
		rss = append(rss, revisionedReplicaSet{rs, rev})
	}
	slices.SortFunc(rss, func(a, b revisionedReplicaSet) int {
		return cmp.Or(cmp.Compare(a.revision, b.revision), a.rs.CreationTimestamp.Compare(b.rs.CreationTimestamp.Time))
	})
	return rss
}
