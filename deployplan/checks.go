package deployplan

import (
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hanzoai/deploy-web/envconfig"
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

// imageMatch is what the catalog says about one workload image.
type imageMatch struct {
	// svc is the catalog service with the image's repository, if any.
	svc *CatalogService
	// thirdParty is set when a thirdParty entry admits the image (same
	// repository and digest); thirdPartyRepo when an entry has the
	// repository but not this digest (or the image pins none).
	thirdParty     *Image
	thirdPartyRepo bool
}

// match finds what the catalog says about img: the first service with its
// repository; in version mode, where a catalog may list several releases
// of one repository (the one running and the ones a rollback may return
// to), the service whose tag is img's tag when one is.
func (c *Catalog) match(img Image) imageMatch {
	var first *CatalogService
	for i := range c.Services {
		ci, err := ParseImage(c.Services[i].Image)
		if err != nil || ci.Repository != img.Repository {
			continue
		}
		if !c.versionMode() || c.Services[i].Tag == img.Tag {
			return imageMatch{svc: &c.Services[i]}
		}
		if first == nil {
			first = &c.Services[i]
		}
	}
	if first != nil {
		return imageMatch{svc: first}
	}
	tp, byRepo, ok := c.lookupThirdParty(img)
	if ok {
		return imageMatch{thirdParty: &tp}
	}
	return imageMatch{thirdPartyRepo: byRepo}
}

// SourceChecks is the offline source planner. Every workload image is a
// catalog service's or an admitted third-party image; a service's image is
// tagged with the catalog commit (commit mode: the full hash or a 7+
// character prefix) or with the service's own tag (version mode), and a
// digest it pins is the service's; a third-party image pins the digest of
// its thirdParty entry; the environment variables that mirror the image or
// the commit agree. Findings are grouped: one Blocker per kind of problem,
// with the affected containers (docs/plan-and-apply.md, "The report"), sorted by id.
func SourceChecks(workloads []Workload, cat *Catalog, mirrors envconfig.EnvMirrors) []Blocker {
	is := newIssues()
	var wrongTags []string // tags that are not the catalog commit (commit mode)
	const tagID = "tag-not-catalog-commit"
	tagSummary := fmt.Sprintf("image tags are not the catalog commit %s", cat.Commit)
	if !cat.versionMode() {
		for _, s := range cat.Services {
			if ci, err := ParseImage(s.Image); err == nil && ci.Tag != "" && !commitMatches(ci.Tag, cat.Commit) {
				is.add(tagID, "catalog/"+s.ID, fmt.Sprintf("catalog service %s is %s", s.ID, s.Image), tagSummary, "")
				wrongTags = append(wrongTags, ci.Tag)
			}
		}
	}
	imageVars := toSet(mirrors.Image)
	commitVars := toSet(mirrors.Commit)
	for _, w := range workloads {
		for _, c := range w.Containers {
			ref := objRef(w.Kind, w.Name, c.Name)
			img, err := ParseImage(c.Image)
			if c.Image == "" || err != nil {
				is.add("invalid-image", ref, fmt.Sprintf("%s: %q", ref, c.Image), "containers without a valid image reference", "set a valid image reference in the manifest")
				continue
			}
			m := cat.match(img)
			switch {
			case m.svc != nil:
				svc := m.svc
				if cat.versionMode() {
					if img.Tag != svc.Tag {
						is.add("tag-not-catalog-version", ref, fmt.Sprintf("%s runs %s, the catalog has %s at %s", ref, c.Image, svc.ID, svc.Tag),
							"image tags are not their service's tag in the catalog (version mode)",
							"set each image's tag to its service's tag in the catalog, or publish a catalog with the versions the manifests use")
					}
				} else if !commitMatches(img.Tag, cat.Commit) {
					is.add(tagID, ref, fmt.Sprintf("%s runs %s", ref, c.Image), tagSummary, "")
					wrongTags = append(wrongTags, img.Tag)
				}
				if img.Digest != "" && svc.Digest != "" && img.Digest != svc.Digest {
					is.add("digest-not-catalog-digest", ref, fmt.Sprintf("%s pins %s, the catalog has %s for %s", ref, img.Digest, svc.Digest, svc.ID),
						"pinned digests differ from the catalog's", "pin the catalog's digest, or drop the digest from the manifest")
				}
			case m.thirdParty != nil:
			case m.thirdPartyRepo && img.Digest == "":
				is.add("third-party-not-pinned", ref, fmt.Sprintf("%s runs %s without a digest", ref, c.Image),
					"third-party images must be pinned by digest",
					"pin the image by the digest of its catalog thirdParty entry (repository[:tag]@sha256:...)")
			case m.thirdPartyRepo:
				is.add("third-party-not-in-catalog", ref, fmt.Sprintf("%s runs %s", ref, c.Image),
					"third-party images whose digest (or tag) is not a catalog thirdParty entry",
					"pin a digest listed in the catalog's thirdParty, or add this image (with its digest) to thirdParty")
			default:
				hint := "add the service to the catalog's services, or fix the image repository in the manifest; an image the application does not build goes in the catalog's thirdParty list with its digest: {\"image\": \"" + img.Repository + ":<tag>@sha256:<digest>\"}"
				is.add("image-not-in-catalog", ref, fmt.Sprintf("%s runs %s (repository %s)", ref, c.Image, img.Repository),
					"images whose repository is in neither the catalog's services nor its thirdParty list", hint)
			}
			for _, e := range c.Env {
				vref := ref + "/" + e.Name
				switch {
				case imageVars[e.Name] && e.FromRef:
					is.add("env-mirror-unverifiable", vref, fmt.Sprintf("%s sets %s from a reference", ref, e.Name),
						"mirror variables set from a reference cannot be checked", "set the mirror variables to literal values")
				case imageVars[e.Name] && e.Value != c.Image:
					is.add("env-mirror-image", vref, fmt.Sprintf("%s: %s=%q, the image is %s", ref, e.Name, e.Value, c.Image),
						"image mirror variables differ from their container's image", "set each image mirror variable to its container's image")
				case commitVars[e.Name] && m.thirdParty != nil:
					// A third-party image carries no application commit.
				case commitVars[e.Name] && e.FromRef:
					is.add("env-mirror-unverifiable", vref, fmt.Sprintf("%s sets %s from a reference", ref, e.Name),
						"mirror variables set from a reference cannot be checked", "set the mirror variables to literal values")
				case commitVars[e.Name] && cat.versionMode():
					if m.svc == nil {
						break
					}
					if e.Value != m.svc.Tag && !(cat.Commit != "" && commitMatches(e.Value, cat.Commit)) {
						want := fmt.Sprintf("the service's tag %s", m.svc.Tag)
						if cat.Commit != "" {
							want += fmt.Sprintf(" or the catalog commit %s", cat.Commit)
						}
						is.add("env-mirror-commit", vref, fmt.Sprintf("%s: %s=%q, want %s", ref, e.Name, e.Value, want),
							"commit mirror variables differ from the version or commit they mirror", "set each commit mirror variable to its service's tag (or the catalog commit)")
					}
				case commitVars[e.Name] && !commitMatches(e.Value, cat.Commit):
					is.add("env-mirror-commit", vref, fmt.Sprintf("%s: %s=%q", ref, e.Name, e.Value),
						fmt.Sprintf("commit mirror variables differ from the catalog commit %s", cat.Commit), fmt.Sprintf("set each commit mirror variable to %s", cat.Commit))
				}
			}
		}
	}
	if is.has(tagID) {
		is.setHint(tagID, tagHint(wrongTags, cat.Commit))
	}
	return is.blockers()
}

// tagHint says how to fix images whose tags are not the catalog commit.
// It never proposes a version, or nothing, as a commit.
func tagHint(tags []string, commit string) string {
	var versions, commits []string
	untagged := false
	for _, t := range tags {
		switch {
		case t == "":
			untagged = true
		case commitRE.MatchString(t):
			if !contains(commits, t) {
				commits = append(commits, t)
			}
		default:
			if !contains(versions, t) {
				versions = append(versions, t)
			}
		}
	}
	switch {
	case len(versions) > 0:
		return fmt.Sprintf("these images are tagged with versions (%s), not commits: use a catalog in version mode (\"mode\": \"version\", each service with its \"tag\" and \"digest\"; docs/plan-and-apply.md, \"The artifact catalog\"), or tag the images with the commit %s", quoteList(versions, 3), commit)
	case len(commits) == 1 && !untagged:
		return fmt.Sprintf("tag the images with %s (the catalog commit), or publish the catalog of commit %s", commit, commits[0])
	default:
		return fmt.Sprintf("tag every image with the catalog commit %s (or its first 7+ characters)", commit)
	}
}

func quoteList(ss []string, max int) string {
	var q []string
	for i, s := range ss {
		if i == max {
			q = append(q, "…")
			break
		}
		q = append(q, fmt.Sprintf("%q", s))
	}
	return strings.Join(q, ", ")
}

func toSet(ss []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// ArtifactGates checks the artifacts the workloads use: published, not a
// skeleton image, a sha256 digest, and (with an expected commit other than
// the catalog's, commit mode) tags naming the expected commit. It also fills
// the artifact plan (without the registry fields); admitted third-party
// images in use are listed among its services with thirdParty set, so the
// registry check covers them too.
func ArtifactGates(workloads []Workload, cat *Catalog, expected string, skeleton []string) (ArtifactPlan, []Blocker) {
	plan := ArtifactPlan{ExpectedArtifactCommit: expected, CatalogCommit: cat.Commit, CatalogMode: cat.Mode, RegistryStatus: "not-checked"}
	if plan.CatalogMode == "" {
		plan.CatalogMode = CatalogModeCommit
	}
	is := newIssues()
	var out []Blocker
	switch {
	case expected == "":
	case cat.Commit == "":
		out = append(out, Blocker{ID: "catalog-not-expected-commit", Message: fmt.Sprintf("the catalog (version mode) names no commit, so it cannot be shown to be the expected artifact commit %s", expected),
			UnblockHint: "record the application commit in the catalog's commit field, or plan without --expect-commit"})
	case !commitMatches(expected, cat.Commit) && !commitMatches(cat.Commit, expected):
		out = append(out, Blocker{ID: "catalog-not-expected-commit", Message: fmt.Sprintf("the catalog is for commit %s, not the expected artifact commit %s", cat.Commit, expected),
			UnblockHint: "publish the catalog of the expected commit, or plan with the catalog's commit"})
	}
	// Tags are checked against the catalog by SourceChecks; an expected
	// commit other than the catalog's is checked here (commit mode only:
	// in version mode tags are versions).
	checkExpectedTags := expected != "" && !cat.versionMode() && !(commitMatches(expected, cat.Commit) || commitMatches(cat.Commit, expected))
	inUse := map[string]bool{}
	tpInUse := map[string]Image{}
	var tpOrder []string
	tags := map[string]bool{}
	for _, w := range workloads {
		for _, c := range w.Containers {
			img, err := ParseImage(c.Image)
			if err != nil {
				continue
			}
			ref := objRef(w.Kind, w.Name, c.Name)
			if isSkeleton(img, skeleton) {
				is.add("skeleton-image", ref, fmt.Sprintf("%s runs %s", ref, c.Image), "placeholder images", "replace each placeholder with the service's published image")
			}
			m := cat.match(img)
			if m.thirdParty != nil {
				k := m.thirdParty.Raw
				if _, ok := tpInUse[k]; !ok {
					tpInUse[k] = *m.thirdParty
					tpOrder = append(tpOrder, k)
				}
				continue
			}
			if checkExpectedTags && !commitMatches(img.Tag, expected) {
				is.add("tag-not-expected-commit", ref, fmt.Sprintf("%s runs %s", ref, c.Image), fmt.Sprintf("image tags are not the expected commit %s", expected),
					fmt.Sprintf("tag the images with %s", expected))
			}
			if m.svc != nil {
				inUse[m.svc.ID] = true
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
	if len(inUse) > 0 || len(tpInUse) > 0 {
		plan.PublishStatus = "published"
	}
	for _, s := range cat.Services {
		plan.Services = append(plan.Services, ArtifactService{ID: s.ID, Image: s.Image, Tag: s.Tag, Digest: s.Digest, Published: s.Published, InUse: inUse[s.ID], Registry: "not-checked"})
		if !s.Published {
			plan.UnpublishedServices = append(plan.UnpublishedServices, s.ID)
		}
		if !inUse[s.ID] {
			continue
		}
		if !s.Published {
			plan.PublishStatus = "unpublished"
			is.add("unpublished", s.ID, fmt.Sprintf("service %s (%s)", s.ID, s.Image), "services in use are not published in the catalog",
				"publish the images (and their digests) and mark them published in the catalog")
		}
		if ci, err := ParseImage(s.Image); err == nil && isSkeleton(ci, skeleton) {
			is.add("skeleton-image", "catalog/"+s.ID, fmt.Sprintf("catalog service %s is %s", s.ID, s.Image), "placeholder images", "replace each placeholder with the service's published image")
		}
		if !ValidDigest(s.Digest) {
			d := fmt.Sprintf("catalog service %s has none", s.ID)
			if s.Digest != "" {
				d = fmt.Sprintf("catalog service %s has %q", s.ID, s.Digest)
			}
			is.add("missing-digest", s.ID, d, "services in use have no sha256 digest in the catalog", "record each pushed image's sha256 digest in the catalog")
		}
	}
	for _, k := range tpOrder {
		tp := tpInUse[k]
		shown := tp.Repository
		if tp.Tag != "" {
			shown += ":" + tp.Tag
		}
		plan.Services = append(plan.Services, ArtifactService{ID: shown, Image: tp.Raw, Tag: tp.Tag, Digest: tp.Digest, Published: true, InUse: true, ThirdParty: true, Registry: "not-checked"})
	}
	sort.Strings(plan.UnpublishedServices)
	return plan, dedupeBlockers(append(out, is.blockers()...))
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
// (the namespace rule, InNamespace) and returns a blocker for every object outside the
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
			o.SetNamespace(InNamespace(o, ns, scope))
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
		return Blocker{ID: "job-not-allowlisted:Job/" + j.Job, Message: fmt.Sprintf("Job %s: %s (%s -> %s)", j.Job, j.Reason, textfmt.OrDash(j.OldImage), textfmt.OrDash(j.NewImage)),
			UnblockHint: allowlistHint}, true
	case JobFailed:
		return Blocker{ID: "job-template-changed:Job/" + j.Job, Message: fmt.Sprintf("Job %s: %s", j.Job, j.Reason),
			UnblockHint: "keep the Job's pod template as it is live, or change its image too"}, true
	case JobBlockedNotSuspended:
		return Blocker{ID: "job-not-suspended:Job/" + j.Job, Message: fmt.Sprintf("Job %s: %s", j.Job, j.Reason),
			UnblockHint: "wait for the Job to finish and suspend it, or delete it yourself; deploy-web only replaces suspended template Jobs"}, true
	}
	return Blocker{}, false
}

// ApplyRequest is what the command line asked of an apply.
type ApplyRequest struct {
	Env                    string
	ConfirmEnv             string
	ConfirmedNonProduction bool
}

// RefusalError is an apply refused before anything was touched (exit 2).
type RefusalError struct{ Reason string }

func (e *RefusalError) Error() string { return "refused: " + e.Reason }

// CheckApplyRequest is the first gate of an apply: protected environments
// and missing confirmations are refused. (Flags that ask for something
// never allowed are refused by the command line before it reads anything.)
func CheckApplyRequest(env *envconfig.Environment, req ApplyRequest) error {
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
	if n := len(d.Orphans); n > 0 {
		s += fmt.Sprintf("; %d orphan(s) (applied earlier, no longer rendered) stay unless the apply prunes them (--prune)", n)
	}
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
