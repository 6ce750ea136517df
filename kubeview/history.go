package kubeview

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
)

// Release is one entry of an App's deploy history: a ReplicaSet of its
// Deployment.
type Release struct {
	Revision int64     `json:"revision"`
	Image    string    `json:"image"`
	Version  string    `json:"version"`
	Created  time.Time `json:"createdAt"`
	Replicas int32     `json:"replicas"`
	Ready    int32     `json:"ready"`
	// Current is the Deployment's newest revision.
	Current bool `json:"current"`
	// Declared is the version the App declares now.
	Declared bool `json:"declared"`
	// CleanSemver says whether Version may be rolled back to.
	CleanSemver bool `json:"cleanSemver"`
}

// History returns an App's deploy history from its Deployment's
// ReplicaSets, newest first. An App without a Deployment has none.
func (c *Cache) History(namespace, name string) ([]Release, error) {
	app, err := c.LookupApp(namespace, name)
	if err != nil {
		return nil, err
	}
	return buildHistory(app, c), nil
}

// HistoryImages returns the images an App has run, newest first (for the
// rollback gate, which pins only an image that ran).
func (c *Cache) HistoryImages(namespace, name string) ([]string, error) {
	h, err := c.History(namespace, name)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(h))
	for _, r := range h {
		out = append(out, r.Image)
	}
	return out, nil
}

func buildHistory(app *unstructured.Unstructured, src objectSource) []Release {
	dep := appDeployment(children(app, src), app.GetName())
	if dep == nil {
		return nil
	}
	image, _, _ := unstructured.NestedString(app.Object, "spec", "image")
	declared := appcr.ImageTag(image)
	var out []Release
	for _, ri := range replicaSetsOf(dep, src) {
		rs, rev := ri.rs, ri.revision
		img := containerImage(rs.Spec.Template.Spec, dep.Name)
		r := Release{Revision: rev, Image: img, Version: appcr.ImageTag(img), Created: rs.CreationTimestamp.Time, Ready: rs.Status.ReadyReplicas}
		if rs.Spec.Replicas != nil {
			r.Replicas = *rs.Spec.Replicas
		}
		r.Declared = r.Version == declared
		r.CleanSemver = appcr.IsCleanSemver(r.Version)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Release) int {
		return cmp.Or(cmp.Compare(b.Revision, a.Revision), b.Created.Compare(a.Created))
	})
	if len(out) > 0 {
		out[0].Current = true
	}
	return out
}
