package deployplan

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// This file holds the pure decisions of a plan: no I/O, table-tested.

func objRef(kind, name, container string) string {
	s := kind + "/" + name
	if container != "" {
		s += "/" + container
	}
	return s
}

// SourceChecks is the offline source planner: every workload image is in
// the catalog, its tag is the catalog commit (or its 7+ character prefix),
// a digest it pins is the catalog's, and the environment variables that
// mirror the image or the commit agree. It returns one Blocker per
// divergence, sorted by id.
func SourceChecks(workloads []Workload, cat *Catalog, mirrors EnvMirrors) []Blocker {
	var out []Blocker
	add := func(id, msg, hint string) { out = append(out, Blocker{ID: id, Message: msg, UnblockHint: hint}) }
	for _, s := range cat.Services {
		if ci, err := ParseImage(s.Image); err == nil && ci.Tag != "" && !commitMatches(ci.Tag, cat.Commit) {
			add("catalog-tag-not-commit:"+s.ID,
				fmt.Sprintf("catalog service %s has image %s whose tag is not the catalog commit %s", s.ID, s.Image, cat.Commit),
				"regenerate the catalog so every image is tagged with its commit")
		}
	}
	imageVars := toSet(mirrors.Image)
	commitVars := toSet(mirrors.Commit)
	for _, w := range workloads {
		for _, c := range w.Containers {
			ref := objRef(w.Kind, w.Name, c.Name)
			img, err := ParseImage(c.Image)
			if c.Image == "" || err != nil {
				add("invalid-image:"+ref, fmt.Sprintf("%s has no valid image (%q)", ref, c.Image), "set a valid image reference in the manifest")
				continue
			}
			svc, ok := cat.Lookup(img)
			if !ok {
				add("image-not-in-catalog:"+ref,
					fmt.Sprintf("%s runs %s, whose repository %s is not in the catalog", ref, c.Image, img.Repository),
					"add the service to the artifact catalog, or fix the image repository in the manifest")
			} else {
				if !commitMatches(img.Tag, cat.Commit) {
					add("tag-not-catalog-commit:"+ref,
						fmt.Sprintf("%s runs %s: tag %q is not the catalog commit %s", ref, c.Image, img.Tag, cat.Commit),
						fmt.Sprintf("set the image tag to %s (the catalog commit), or publish a catalog for commit %q", cat.Commit, img.Tag))
				}
				if img.Digest != "" && svc.Digest != "" && img.Digest != svc.Digest {
					add("digest-not-catalog-digest:"+ref,
						fmt.Sprintf("%s pins digest %s but the catalog has %s for %s", ref, img.Digest, svc.Digest, svc.ID),
						"pin the catalog's digest, or drop the digest from the manifest")
				}
			}
			for _, e := range c.Env {
				switch {
				case imageVars[e.Name] && e.FromRef:
					add("env-mirror-unverifiable:"+ref+"/"+e.Name, fmt.Sprintf("%s sets %s from a reference, so it cannot be checked against the image", ref, e.Name), "set "+e.Name+" to a literal value")
				case imageVars[e.Name] && e.Value != c.Image:
					add("env-mirror-image:"+ref+"/"+e.Name,
						fmt.Sprintf("%s: %s=%q does not mirror the image %s", ref, e.Name, e.Value, c.Image),
						fmt.Sprintf("set %s to %q", e.Name, c.Image))
				case commitVars[e.Name] && e.FromRef:
					add("env-mirror-unverifiable:"+ref+"/"+e.Name, fmt.Sprintf("%s sets %s from a reference, so it cannot be checked against the commit", ref, e.Name), "set "+e.Name+" to a literal value")
				case commitVars[e.Name] && !commitMatches(e.Value, cat.Commit):
					add("env-mirror-commit:"+ref+"/"+e.Name,
						fmt.Sprintf("%s: %s=%q does not mirror the catalog commit %s", ref, e.Name, e.Value, cat.Commit),
						fmt.Sprintf("set %s to %q", e.Name, cat.Commit))
				}
			}
		}
	}
	return dedupeBlockers(out)
}

func toSet(ss []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// ArtifactGates checks the artifacts the workloads use: published, not a
// skeleton image, a sha256 digest, and tags naming the expected commit. It
// also fills the artifact plan (without the registry fields).
func ArtifactGates(workloads []Workload, cat *Catalog, expected string, skeleton []string) (ArtifactPlan, []Blocker) {
	plan := ArtifactPlan{ExpectedArtifactCommit: expected, CatalogCommit: cat.Commit, RegistryStatus: "not-checked"}
	var out []Blocker
	add := func(id, msg, hint string) { out = append(out, Blocker{ID: id, Message: msg, UnblockHint: hint}) }
	if expected != "" && !commitMatches(expected, cat.Commit) && !commitMatches(cat.Commit, expected) {
		add("catalog-not-expected-commit", fmt.Sprintf("the catalog is for commit %s, not the expected artifact commit %s", cat.Commit, expected),
			"publish the catalog of the expected commit, or plan with the catalog's commit")
	}
	inUse := map[string]bool{}
	tags := map[string]bool{}
	for _, w := range workloads {
		for _, c := range w.Containers {
			img, err := ParseImage(c.Image)
			if err != nil {
				continue
			}
			ref := objRef(w.Kind, w.Name, c.Name)
			if isSkeleton(img, skeleton) {
				add("skeleton-image:"+ref, fmt.Sprintf("%s runs the placeholder image %s", ref, c.Image), "replace the placeholder with the service's published image")
			}
			if expected != "" && !commitMatches(img.Tag, expected) {
				add("tag-not-expected-commit:"+ref, fmt.Sprintf("%s runs %s: tag %q is not the expected commit %s", ref, c.Image, img.Tag, expected),
					fmt.Sprintf("tag the image with %s", expected))
			}
			if svc, ok := cat.Lookup(img); ok {
				inUse[svc.ID] = true
			}
			tags[img.Tag] = true
		}
	}
	switch len(tags) {
	case 0:
	case 1:
		for t := range tags {
			plan.DeployCommit = t
		}
	default:
		plan.DeployCommit = "mixed"
	}
	plan.PublishStatus = "none"
	if len(inUse) > 0 {
		plan.PublishStatus = "published"
	}
	for _, s := range cat.Services {
		plan.Services = append(plan.Services, ArtifactService{ID: s.ID, Image: s.Image, Digest: s.Digest, Published: s.Published, InUse: inUse[s.ID], Registry: "not-checked"})
		if !s.Published {
			plan.UnpublishedServices = append(plan.UnpublishedServices, s.ID)
		}
		if !inUse[s.ID] {
			continue
		}
		if !s.Published {
			plan.PublishStatus = "unpublished"
			add("unpublished:"+s.ID, fmt.Sprintf("service %s (%s) is not published in the catalog", s.ID, s.Image),
				"publish the image (and its digest) and mark it published in the catalog")
		}
		if ci, err := ParseImage(s.Image); err == nil && isSkeleton(ci, skeleton) {
			add("skeleton-image:catalog/"+s.ID, fmt.Sprintf("catalog service %s is the placeholder image %s", s.ID, s.Image), "publish the real image in the catalog")
		}
		if !ValidDigest(s.Digest) {
			msg := fmt.Sprintf("catalog service %s has no sha256 digest", s.ID)
			if s.Digest != "" {
				msg = fmt.Sprintf("catalog service %s has digest %q, not sha256:<64 hex>", s.ID, s.Digest)
			}
			add("missing-digest:"+s.ID, msg, "record the pushed image's sha256 digest in the catalog")
		}
	}
	sort.Strings(plan.UnpublishedServices)
	return plan, dedupeBlockers(out)
}

func isSkeleton(img Image, patterns []string) bool {
	last := img.Repository[strings.LastIndex(img.Repository, "/")+1:]
	for _, p := range patterns {
		p = strings.ToLower(p)
		if strings.Contains(strings.ToLower(last), p) || strings.Contains(strings.ToLower(img.Tag), p) {
			return true
		}
	}
	return false
}

// Scope says whether a kind is namespaced; known is false when the cluster
// does not serve it.
type Scope func(gvk schema.GroupVersionKind) (namespaced, known bool)

// BoundaryCheck defaults an empty namespace of a namespaced object to ns
// (as kubectl -n does) and returns a blocker for every object outside the
// namespace: another namespace, a cluster-scoped kind, or a kind the
// cluster does not serve.
func BoundaryCheck(objs []*unstructured.Unstructured, ns string, scope Scope) []Blocker {
	var out []Blocker
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		ref := o.GetKind() + "/" + o.GetName()
		namespaced, known := scope(gvk)
		switch {
		case !known:
			out = append(out, Blocker{ID: "unknown-kind:" + ref, Message: fmt.Sprintf("%s: the cluster does not serve %s", ref, gvk.GroupVersion().WithKind(gvk.Kind)),
				UnblockHint: "install the CRD out of band (it is cluster-scoped, outside the boundary), or remove the object"})
		case !namespaced:
			out = append(out, Blocker{ID: "cluster-scoped:" + ref, Message: fmt.Sprintf("%s is cluster-scoped, outside namespace %s", ref, ns),
				UnblockHint: "remove it from the kustomization (cluster-scoped objects are managed out of band)"})
		case o.GetNamespace() == "":
			o.SetNamespace(ns)
		case o.GetNamespace() != ns:
			out = append(out, Blocker{ID: "outside-namespace:" + ref, Message: fmt.Sprintf("%s is in namespace %s, not %s", ref, o.GetNamespace(), ns),
				UnblockHint: fmt.Sprintf("set namespace: %s in the kustomization, or remove the object", ns)})
		}
	}
	return dedupeBlockers(out)
}

// IsImmutableTemplate reports whether an apply error is the "field is
// immutable" rejection of a Job's spec.template.
func IsImmutableTemplate(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Details == nil {
		return strings.Contains(err.Error(), "spec.template") && strings.Contains(err.Error(), "immutable")
	}
	for _, c := range st.Status().Details.Causes {
		if strings.HasPrefix(c.Field, "spec.template") && strings.Contains(c.Message, "immutable") {
			return true
		}
	}
	return false
}

// jobImages returns the images of a Job's containers, joined, in order.
func jobImages(u *unstructured.Unstructured) string {
	w, ok := WorkloadOf(u)
	if !ok {
		return ""
	}
	var imgs []string
	for _, c := range w.Containers {
		imgs = append(imgs, c.Image)
	}
	return strings.Join(imgs, ",")
}

// JobDecision decides what happens to one rendered Job given the live one
// (nil when absent) and whether a dry-run apply said its template is
// immutable. Only an allowlisted Job, suspended both live and desired, whose
// image changed is planned for replacement.
func JobDecision(desired, live *unstructured.Unstructured, allowlisted, immutable bool) JobReplacement {
	r := JobReplacement{Namespace: desired.GetNamespace(), Job: desired.GetName(), NewImage: jobImages(desired), Allowlisted: allowlisted}
	dw, _ := WorkloadOf(desired)
	if live == nil {
		r.Result, r.Suspended = JobNotFound, dw.Suspended
		r.Reason = "no live Job: it will be created"
		return r
	}
	lw, _ := WorkloadOf(live)
	r.OldImage, r.Suspended, r.OldUID = jobImages(live), lw.Suspended, string(live.GetUID())
	changed := r.OldImage != r.NewImage
	switch {
	case !changed && !immutable:
		r.Result = JobNotNeeded
		r.Reason = "image unchanged: applied in place"
		if !allowlisted {
			r.Reason = "not allowlisted; image unchanged, so it is left as it is"
		}
	case !allowlisted:
		r.Result = JobBlockedNotAllowlisted
		r.Reason = "its pod template changed but it is not in the allowlist, so it is never deleted"
	case !changed:
		r.Result = JobFailed
		r.Reason = "its pod template changed but not its image: only image changes are replaced"
	case !lw.Suspended:
		r.Result = JobBlockedNotSuspended
		r.Reason = "the live Job is not suspended (it may be running): never replaced"
	case !dw.Suspended:
		r.Result = JobBlockedNotSuspended
		r.Reason = "the rendered Job is not suspended: only suspended template Jobs are replaced"
	default:
		r.Result = JobPlanned
		r.Reason = "allowlisted, suspended, image changed: delete and re-create"
	}
	return r
}

// JobBlocker turns a blocked Job decision into a blocker.
func JobBlocker(j JobReplacement, allowlistHint string) (Blocker, bool) {
	switch j.Result {
	case JobBlockedNotAllowlisted:
		return Blocker{ID: "job-not-allowlisted:" + j.Job, Message: fmt.Sprintf("Job %s: %s (%s -> %s)", j.Job, j.Reason, textfmt.OrDash(j.OldImage), textfmt.OrDash(j.NewImage)),
			UnblockHint: allowlistHint}, true
	case JobFailed:
		return Blocker{ID: "job-template-changed:" + j.Job, Message: fmt.Sprintf("Job %s: %s", j.Job, j.Reason),
			UnblockHint: "keep the Job's pod template as it is live, or change its image too"}, true
	case JobBlockedNotSuspended:
		return Blocker{ID: "job-not-suspended:" + j.Job, Message: fmt.Sprintf("Job %s: %s", j.Job, j.Reason),
			UnblockHint: "wait for the Job to finish and suspend it, or delete it yourself; deploy-web only replaces suspended template Jobs"}, true
	}
	return Blocker{}, false
}

// ObjectAction compares a live object with the result of a server-side
// dry-run apply: create when there is no live object, unchanged when the
// dry-run changed nothing that matters, else update.
func ObjectAction(live, dryRun *unstructured.Unstructured) string {
	if live == nil {
		return ActionCreate
	}
	if dryRun == nil {
		return ActionUnknown
	}
	if reflect.DeepEqual(comparable(live), comparable(dryRun)) {
		return ActionUnchanged
	}
	return ActionUpdate
}

func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy().Object
	unstructured.RemoveNestedField(c, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid"} {
		unstructured.RemoveNestedField(c, "metadata", f)
	}
	return c
}

// ApplyRequest is what the command line asked of an apply.
type ApplyRequest struct {
	Env                    string
	ConfirmEnv             string
	ConfirmedNonProduction bool
	// Forbidden holds flags that ask for something never allowed, as
	// written ("--force", "--production", "--allow-secret-reads").
	Forbidden []string
}

// RefusalError is an apply refused before anything was touched (exit 2).
type RefusalError struct{ Reason string }

func (e *RefusalError) Error() string { return "refused: " + e.Reason }

// CheckApplyRequest is the first gate of an apply: protected environments,
// forbidden flags and missing confirmations are refused.
func CheckApplyRequest(env *Environment, req ApplyRequest) error {
	if len(req.Forbidden) > 0 {
		return &RefusalError{Reason: fmt.Sprintf("%s asks for something deploy-web never does (production, secret reads, force, force-push); nothing was touched", strings.Join(req.Forbidden, ", "))}
	}
	if env.Protected {
		return &RefusalError{Reason: fmt.Sprintf("environment %s is protected (production): apply is always refused; nothing was touched", env.Name)}
	}
	if req.ConfirmEnv != env.Name {
		if req.ConfirmEnv == "" {
			return &RefusalError{Reason: fmt.Sprintf("apply needs --confirm-env=%s; nothing was touched", env.Name)}
		}
		return &RefusalError{Reason: fmt.Sprintf("--confirm-env=%s does not match --env %s; nothing was touched", req.ConfirmEnv, env.Name)}
	}
	if !req.ConfirmedNonProduction {
		return &RefusalError{Reason: "apply needs --confirmed-non-production; nothing was touched"}
	}
	return nil
}

// Conclude sets the conclusion of a plan: blocked if and only if there are
// blockers, else ready.
func Conclude(d *DeployApply) {
	d.normalize()
	if n := len(d.RemainingBlockers); n > 0 {
		d.Conclusion = Conclusion{Status: StatusBlocked, Summary: fmt.Sprintf("%d blocker(s); nothing can be applied until they are fixed", n)}
		return
	}
	changes, replacements := 0, 0
	for _, o := range d.Objects {
		if o.Action == ActionCreate || o.Action == ActionUpdate || o.Action == ActionReplace {
			changes++
		}
	}
	for _, j := range d.TemplateJobReplacements {
		if j.Result == JobPlanned {
			replacements++
		}
	}
	s := fmt.Sprintf("ready: %d of %d object(s) would change, %d template Job(s) would be replaced", changes, len(d.Objects), replacements)
	if d.Target.Protected {
		s += "; the environment is protected, so apply is refused"
	}
	d.Conclusion = Conclusion{Status: StatusReady, Summary: s}
}

// isApplyCommand reports whether a manual command performs an apply.
func isApplyCommand(c string) bool {
	for _, f := range strings.Fields(c) {
		if f == "--apply" || f == "-apply" {
			return true
		}
	}
	return false
}
