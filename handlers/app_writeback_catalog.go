package handlers

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/web/templates"
	"github.com/hanzoai/deploy-web/writeback"
)

// catalogError is a version change the environment's catalog would block:
// the plan of the commit would not be ready, so nothing is committed.
type catalogError struct{ msg string }

func (e *catalogError) Error() string { return e.msg }

// checkCatalogAdmits refuses to move App kind/name of environment env to
// image when env's catalog, read from tree (the repository the commit is
// made on), would block that image: the plan's own rule (SourceChecks) on
// the App alone. A version-mode catalog admits a release it lists (it may
// list several of one image); a commit-mode catalog admits only images
// tagged with its commit, never a version. A catalog outside the
// repository (an absolute path on disk) is not read here: the plan checks
// it.
func checkCatalogAdmits(tree fs.FS, env *deployplan.Environment, kind, name, image string) error {
	p, ok := env.CatalogInRepo()
	if !ok {
		return nil
	}
	cat, err := deployplan.ReadCatalogFS(tree, p)
	if err != nil {
		return &catalogError{fmt.Sprintf("environment %s's catalog %s does not read (%v): fix it in the repository; nothing was pushed",
			env.Name, p, strings.TrimPrefix(err.Error(), "deployplan: "))}
	}
	ref := kind + "/" + name
	w := deployplan.Workload{Kind: kind, Name: name, Containers: []deployplan.Container{{Image: image}}}
	var found []string
	for _, b := range deployplan.SourceChecks([]deployplan.Workload{w}, cat, deployplan.EnvMirrors{}) {
		for _, a := range b.Affected {
			if a == ref {
				found = append(found, b.Message)
				break
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	why := strings.Join(found, "; ")
	if cat.Mode == deployplan.CatalogModeVersion {
		return &catalogError{fmt.Sprintf("environment %s's catalog %s (version mode) does not admit %s (%s), so the plan of the commit would be blocked: list that release in the catalog (a service entry with its tag and digest; a version-mode catalog may list several releases of an image) and try again; nothing was pushed",
			env.Name, p, image, why)}
	}
	return &catalogError{fmt.Sprintf("environment %s's catalog %s is in commit mode: every image must be tagged with its commit %s, so %s would be blocked (%s): use a version-mode catalog that lists the releases to roll back to (docs/gitops.md); nothing was pushed",
		env.Name, p, cat.Commit, image, why)}
}

// catalogHistoryCommits bounds the walk of a commit-mode catalog's history
// (and the commits the write-back fetches for it).
const catalogHistoryCommits = writeback.MaxHistory

// commitTagEnv reports whether a rollback of an App environment env
// renders may go to a commit tag: env writes back and its catalog is in
// the repository, which decides on the tree whether it is in commit mode
// (planCatalogMove).
func commitTagEnv(env *deployplan.Environment) bool {
	_, inRepo := env.CatalogInRepo()
	return inRepo && env.WriteBack != nil
}

// commitTagRollback reports whether a rollback to version takes the
// commit-mode path: commitTagEnv, and version is a commit tag (7 to 40
// lowercase hex, never a clean semver). The app page's history asks the
// same (templates.AppGitProps.TakesCommitTag).
func commitTagRollback(env *deployplan.Environment, version string) bool {
	return commitTagEnv(env) && deployplan.ValidCommit(version)
}

// gitRollbackGate is the rollback gate of an App environment env renders
// (nil: none): a version the App has run, a clean semver, or in a
// commitTagRollback a commit tag.
func gitRollbackGate(env *deployplan.Environment, version string, history []string) error {
	if env != nil && commitTagRollback(env, version) {
		return release.InHistory(version, history)
	}
	return release.Gate(version, history)
}

// catalogMove is a rollback in a commit-mode catalog: the catalog file
// goes back to its newest revision on the branch whose commit the rollback
// names, and every App of the environment whose image the catalog covers
// at its current commit moves with it (one catalog commit covers every
// service, so an App left behind would be blocked by the earlier catalog).
type catalogMove struct {
	// Path is the catalog's path in the repository.
	Path string
	// From and To are the catalog's commit now and after the move (equal
	// when the catalog already is at the rollback's commit).
	From, To string
	// Revision is the repository commit whose catalog file the move
	// restores ("" when the catalog does not change).
	Revision string
	// Moved are the Apps whose image changes, sorted by namespace and name.
	Moved []movedApp
	// to is the catalog after the move.
	to    *deployplan.Catalog
	edits []writeback.Edit
}

// movedApp is an App a catalog move changes, with its rendered image
// before and after.
type movedApp struct {
	Namespace, Name string
	From, To        appcr.ImageRef
}

// desiredObjects is the desired-state index's list of an environment's
// rendered objects (envsource.Index), for the confirmation's preview.
type desiredObjects interface {
	Objects(env string) []*unstructured.Unstructured
}

// catalogMovePreview is what the confirmation of a rollback of App a to
// the commit tag version says moves with it: the environment's catalog, if
// in commit mode, and the other Apps its last render runs at the same
// commit as a (their tags name one commit: one is a prefix of the other).
// The POST reads the repository and answers with what moved.
func (s *Server) catalogMovePreview(a appRef, g *gitRendered, version string) *templates.CatalogMovePreview {
	p, _ := g.env.CatalogInRepo()
	out := &templates.CatalogMovePreview{Env: g.env.Name, Catalog: p, Commit: version}
	objs, ok := s.opts.Desired.(desiredObjects)
	if !ok {
		return out
	}
	image, _, _ := unstructured.NestedString(g.desired.Object.Object, "spec", "image")
	tag := appcr.ImageTag(image)
	for _, o := range objs.Objects(g.env.Name) {
		gvk := o.GroupVersionKind()
		if gvk.Group != a.c.AppGroup || gvk.Kind != a.c.AppKind || o.GetName() == a.Name && cmp.Or(o.GetNamespace(), g.env.Namespace) == a.Namespace {
			continue
		}
		img, _, _ := unstructured.NestedString(o.Object, "spec", "image")
		if t := appcr.ImageTag(img); deployplan.ValidCommit(t) && deployplan.ValidCommit(tag) && (strings.HasPrefix(t, tag) || strings.HasPrefix(tag, t)) {
			out.Apps = append(out.Apps, cmp.Or(o.GetNamespace(), g.env.Namespace)+"/"+o.GetName())
		}
	}
	slices.Sort(out.Apps)
	return out
}

// catalogMoveJSON is a catalog move in an answer: the catalog's path and
// its commit before and after.
type catalogMoveJSON struct {
	Path string `json:"path"`
	From string `json:"from"`
	To   string `json:"to"`
}

// movedJSON is an App a catalog move changes, in an answer: its image
// before and after.
type movedJSON struct {
	Namespace string `json:"namespace"`
	App       string `json:"app"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// json is the move in an answer.
func (m *catalogMove) json() (*catalogMoveJSON, []movedJSON) {
	moved := make([]movedJSON, len(m.Moved))
	for i, a := range m.Moved {
		moved[i] = movedJSON{Namespace: a.Namespace, App: a.Name, From: a.From.String(), To: a.To.String()}
	}
	return &catalogMoveJSON{Path: m.Path, From: m.From, To: m.To}, moved
}

// detail is the commit message's account of the move (writeback.Request.Detail).
func (m *catalogMove) detail() []string {
	var out []string
	if m.Revision != "" {
		out = append(out, fmt.Sprintf("The catalog %s moves from commit %s back to commit %s (its content at repository commit %s),", m.Path, m.From, m.To, textfmt.ShortSHA(m.Revision)))
	} else {
		out = append(out, fmt.Sprintf("The catalog %s is at commit %s already,", m.Path, m.To))
	}
	out = append(out, "and every App of the environment at the catalog's commit moves with it:")
	for _, a := range m.Moved {
		out = append(out, fmt.Sprintf("- %s/%s: %s -> %s", a.Namespace, a.Name, a.From.String(), a.To.String()))
	}
	return out
}

// planCatalogMove decides the edits of a rollback of App kind/name to the
// commit tag version in environment env's commit-mode catalog, on tree
// (the branch's head, a writeback.FileHistory): the catalog's revision of
// that commit (its history walked newest first, at most
// catalogHistoryCommits commits, each revision parsed within the plan's
// catalog budget) and the image edits (writeback.Locate) of every App the
// current render runs at the catalog's current commit. A refusal is a
// *catalogError (CatalogRefuses) naming the catalog and the commit, or a
// *locateError or *checkError.
func planCatalogMove(ctx context.Context, tree fs.FS, env *deployplan.Environment, branch, group, kind, name, version string, maxFile int64) (*catalogMove, error) {
	p, _ := env.CatalogInRepo()
	cur, err := deployplan.ReadCatalogFS(tree, p)
	if err != nil {
		return nil, &catalogError{fmt.Sprintf("environment %s's catalog %s does not read (%v): fix it in the repository; nothing was pushed",
			env.Name, p, strings.TrimPrefix(err.Error(), "deployplan: "))}
	}
	if cur.Mode != deployplan.CatalogModeCommit {
		return nil, &catalogError{fmt.Sprintf("environment %s's catalog %s is in version mode: a rollback takes a release it lists (MAJOR.MINOR.PATCH), not the commit tag %s; nothing was pushed",
			env.Name, p, version)}
	}
	// The walk and the render under the write-back's deadline (Plan is
	// given no context of its own).
	ctx, cancel := context.WithTimeout(ctx, env.WriteBackLimits().Timeout)
	defer cancel()
	mv := &catalogMove{Path: p, From: cur.Commit, To: cur.Commit, to: cur}
	if !cur.TaggedWith(version) {
		if err := mv.findRevision(ctx, tree, env, branch, version); err != nil {
			return nil, err
		}
	}
	objs, err := deployplan.RenderFS(ctx, env, tree)
	if err != nil {
		return nil, &checkError{fmt.Sprintf("%s does not render on branch %s (%v): nothing was pushed", env.Source.Path, branch, err)}
	}
	// The image of the App asked for goes to the tag asked for, and so does
	// every App of its repository: they may share one images: entry.
	clickedRepo := ""
	for _, o := range objs {
		if gvk := o.GroupVersionKind(); gvk.Group == group && gvk.Kind == kind && o.GetName() == name {
			img, _, _ := unstructured.NestedString(o.Object, "spec", "image")
			clickedRepo = appcr.ParseImageRef(img).Repository
		}
	}
	seen := map[writeback.Edit]bool{}
	clickedFound := false
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group != group || gvk.Kind != kind {
			continue
		}
		img, _, _ := unstructured.NestedString(o.Object, "spec", "image")
		parsed, err := deployplan.ParseImage(img)
		if err != nil {
			continue // not an image the catalog covers: the plan reports it
		}
		ref := appcr.ParseImageRef(img)
		_, covered := cur.Lookup(parsed)
		clicked := o.GetName() == name
		if !clicked && (!covered || !cur.TaggedWith(ref.Tag)) {
			continue
		}
		clickedFound = clickedFound || clicked
		to, err := mv.target(o.GetName(), ref, parsed, ref.Repository == clickedRepo, version)
		if err != nil {
			return nil, err
		}
		if to == ref {
			continue // at the target already
		}
		edits, err := writeback.Locate(tree, writeback.ImageChange{Dir: env.Source.Path, Kind: kind, Name: o.GetName(), Repository: ref.Repository, Tag: to.Tag, Digest: to.Digest}, maxFile)
		if err != nil {
			return nil, &locateError{err}
		}
		for _, e := range edits {
			if !seen[e] {
				seen[e] = true
				mv.edits = append(mv.edits, e)
			}
		}
		mv.Moved = append(mv.Moved, movedApp{Namespace: cmp.Or(o.GetNamespace(), env.Namespace), Name: o.GetName(), From: ref, To: to})
	}
	if !clickedFound {
		return nil, &checkError{fmt.Sprintf("%s no longer renders %s %s on branch %s: nothing was pushed", env.Source.Path, kind, name, branch)}
	}
	slices.SortFunc(mv.Moved, func(a, b movedApp) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return mv, nil
}

// findRevision walks the history of the catalog file for the newest
// revision in commit mode whose commit the tag version names, and makes it
// the move's target (the catalog edit first among the edits).
func (m *catalogMove) findRevision(ctx context.Context, tree fs.FS, env *deployplan.Environment, branch, version string) error {
	h, ok := tree.(writeback.FileHistory)
	if !ok {
		return fmt.Errorf("handlers: the tree of %s's repository has no history to read the catalog's revisions from", env.Name)
	}
	var (
		content    []byte
		unreadable int
	)
	walk, err := h.FileRevisions(m.Path, catalogHistoryCommits, deployplan.MaxCatalogBytes, func(r writeback.Revision) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("handlers: the history of %s: %w", m.Path, err)
		}
		cat, err := deployplan.ParseCatalogFile(m.Path, r.Content)
		if err != nil {
			unreadable++ // a revision the plan would refuse is never one to go back to
			return false, nil
		}
		if !cat.TaggedWith(version) {
			return false, nil
		}
		m.to, m.To, m.Revision, content = cat, cat.Commit, r.Commit, r.Content
		return true, nil
	})
	if err != nil {
		return err
	}
	if !walk.Found {
		searched := fmt.Sprintf("the whole history of branch %s (%d commits)", branch, walk.Commits)
		if !walk.Complete {
			searched = fmt.Sprintf("the last %d commits of branch %s (the search stops there)", walk.Commits, branch)
		}
		if n := unreadable + len(walk.TooLarge); n > 0 {
			searched += fmt.Sprintf("; %d revisions that do not read as a catalog were passed over", n)
		}
		return &catalogError{fmt.Sprintf("environment %s's catalog %s is in commit mode and no revision of it has commit %s (searched %s): roll back to an image of a commit the catalog published on %s, or restore that catalog in the repository first; nothing was pushed",
			env.Name, m.Path, version, searched, branch)}
	}
	m.edits = append(m.edits, writeback.SetCatalogEntries{File: m.Path, Content: content})
	return nil
}

// target is the image App name moves to: the App asked for, and any of
// its image's repository (asked), to the tag it ran (version); another to
// the tag of its service in the earlier catalog (the commit, as long as
// the App's tag was, when the service's image has no tag). A pinned digest
// becomes the service's. An App whose service the earlier catalog does not
// have cannot move: refused.
func (m *catalogMove) target(name string, ref appcr.ImageRef, parsed deployplan.Image, asked bool, version string) (appcr.ImageRef, error) {
	svc, ok := m.to.Lookup(parsed)
	if !ok {
		return appcr.ImageRef{}, &catalogError{fmt.Sprintf("the catalog %s at commit %s has no service of image %s, which App %s runs at commit %s: it cannot move back with the others; nothing was pushed",
			m.Path, m.To, ref.Repository, name, m.From)}
	}
	to := ref
	switch svcTag := appcr.ImageTag(svc.Image); {
	case asked:
		to.Tag = version
	case m.to.TaggedWith(svcTag):
		to.Tag = svcTag
	default:
		to.Tag = m.To[:min(max(len(ref.Tag), 7), len(m.To))]
	}
	if ref.Digest != "" {
		to.Digest = svc.Digest
	}
	return to, nil
}

// checkCatalogMove checks the edited tree of a catalog move before it is
// pushed: it renders, each moved App renders at its target image, and the
// plan's catalog rule (SourceChecks, on every rendered workload against the
// catalog the tree now holds) finds nothing to block.
func checkCatalogMove(ctx context.Context, env *deployplan.Environment, tree fs.FS, group, kind string, mv *catalogMove) error {
	cat, err := deployplan.ReadCatalogFS(tree, mv.Path)
	if err != nil {
		return &catalogError{fmt.Sprintf("after the edit, environment %s's catalog %s does not read (%v): nothing was pushed", env.Name, mv.Path, strings.TrimPrefix(err.Error(), "deployplan: "))}
	}
	objs, err := renderEdited(ctx, env, tree)
	if err != nil {
		return err
	}
	for _, a := range mv.Moved {
		if err := checkRenderedObjs(env, objs, group, kind, a.Name, a.To); err != nil {
			return err
		}
	}
	var workloads []deployplan.Workload
	for _, o := range objs {
		if w, ok := deployplan.WorkloadOf(o); ok {
			workloads = append(workloads, w)
		}
	}
	var why []string
	for _, b := range deployplan.SourceChecks(workloads, cat, env.EnvMirrors) {
		why = append(why, fmt.Sprintf("%s (%s)", b.Message, strings.Join(b.Affected, ", ")))
	}
	if len(why) > 0 {
		return &catalogError{fmt.Sprintf("after the move to commit %s, the plan of environment %s would be blocked by its catalog %s: %s: move those images with the catalog in the repository, then try again; nothing was pushed",
			cat.Commit, env.Name, mv.Path, strings.Join(why, "; "))}
	}
	return nil
}
