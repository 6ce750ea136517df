package gitops

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
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/writeback"
)

// checkCatalogAdmits refuses to move App kind/name of environment env to
// image when env's catalog, read from tree (the repository the commit is
// made on), would block that image: the plan's own rule (SourceChecks) on
// the App alone. A version-mode catalog admits a release it lists (it may
// list several of one image); a commit-mode catalog admits only images
// tagged with its commit, never a version. A catalog outside the
// repository (an absolute path on disk) is not read here: the plan checks
// it.
func checkCatalogAdmits(tree fs.FS, env *envconfig.Environment, kind, name, image string) error {
	p, ok := env.CatalogInRepo()
	if !ok {
		return nil
	}
	cat, err := deployplan.ReadCatalogFS(tree, p)
	if err != nil {
		return &catalogError{fmt.Sprintf("environment %s's catalog %s does not read (%v): fix it in the repository; nothing was pushed",
			env.Name, p, publicText(err, "see the server log"))}
	}
	ref := kind + "/" + name
	w := deployplan.Workload{Kind: kind, Name: name, Containers: []deployplan.Container{{Image: image}}}
	var found []string
	for _, b := range deployplan.SourceChecks([]deployplan.Workload{w}, cat, envconfig.EnvMirrors{}) {
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

// CommitTagEnv reports whether a rollback of an App environment env
// renders may go to a commit tag: env writes back and its catalog is in
// the repository, which decides on the tree whether it is in commit mode
// (planCatalogMove).
func CommitTagEnv(env *envconfig.Environment) bool {
	_, inRepo := env.CatalogInRepo()
	return inRepo && env.WriteBack != nil
}

// CommitTagRollback reports whether a rollback to version takes the
// commit-mode path: CommitTagEnv, and version is a commit tag (7 to 40
// lowercase hex, never a clean semver). The app page's history asks the
// same (templates.AppGitProps.TakesCommitTag).
func CommitTagRollback(env *envconfig.Environment, version string) bool {
	return CommitTagEnv(env) && deployplan.ValidCommit(version)
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
	Moved []MovedApp
	// to is the catalog after the move.
	to    *deployplan.Catalog
	edits []writeback.Edit
}

// MovedApp is an App a catalog move changes, with its rendered image
// before and after.
type MovedApp struct {
	Namespace, Name string
	From, To        appcr.ImageRef
}

// CatalogChange is a catalog move in an answer: the catalog's path and
// its commit before and after.
type CatalogChange struct {
	Path string `json:"path"`
	From string `json:"from"`
	To   string `json:"to"`
}

// change is the move's catalog change.
func (m *catalogMove) change() *CatalogChange {
	return &CatalogChange{Path: m.Path, From: m.From, To: m.To}
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

// CatalogMoveRequest is a rollback of App Group/Kind/Name to the commit
// tag Version in environment Env's commit-mode catalog, planned on Tree
// (the head of Branch, a writeback.FileHistory); MaxFile bounds each file
// an edit reads.
type CatalogMoveRequest struct {
	Tree              fs.FS
	Env               *envconfig.Environment
	Branch            string
	Group, Kind, Name string
	Version           string
	MaxFile           int64
}

// planCatalogMove decides the edits of a catalog move (CatalogMoveRequest), on the tree
// (the branch's head, a writeback.FileHistory): the catalog's revision of
// that commit (its history walked newest first, at most
// catalogHistoryCommits commits, each revision parsed within the plan's
// catalog budget) and the image edits (writeback.Locate) of every App the
// current render runs at the catalog's current commit. A refusal is a
// *catalogError (CatalogRefuses) naming the catalog and the commit, or a
// *locateError or *checkError.
func planCatalogMove(ctx context.Context, req CatalogMoveRequest) (*catalogMove, error) {
	env := req.Env
	p, _ := env.CatalogInRepo()
	cur, err := deployplan.ReadCatalogFS(req.Tree, p)
	if err != nil {
		return nil, &catalogError{fmt.Sprintf("environment %s's catalog %s does not read (%v): fix it in the repository; nothing was pushed",
			env.Name, p, publicText(err, "see the server log"))}
	}
	if cur.Mode != deployplan.CatalogModeCommit {
		return nil, &catalogError{fmt.Sprintf("environment %s's catalog %s is in version mode: a rollback takes a release it lists (MAJOR.MINOR.PATCH), not the commit tag %s; nothing was pushed",
			env.Name, p, req.Version)}
	}
	// The walk and the render under the write-back's deadline (Plan is
	// given no context of its own).
	ctx, cancel := context.WithTimeout(ctx, writeback.EnvLimits(env).Timeout)
	defer cancel()
	mv := &catalogMove{Path: p, From: cur.Commit, To: cur.Commit, to: cur}
	if !cur.TaggedWith(req.Version) {
		if err := mv.findRevision(ctx, req.Tree, env, req.Branch, req.Version); err != nil {
			return nil, err
		}
	}
	objs, err := deployplan.RenderFS(ctx, env, req.Tree)
	if err != nil {
		return nil, &checkError{fmt.Sprintf("%s does not render on branch %s (%v): nothing was pushed", env.Source.Path, req.Branch, err)}
	}
	// The image of the App asked for goes to the tag asked for, and so does
	// every App of its repository: they may share one images: entry.
	clickedRepo := ""
	for _, o := range objs {
		if gvk := o.GroupVersionKind(); gvk.Group == req.Group && gvk.Kind == req.Kind && o.GetName() == req.Name {
			img, _, _ := unstructured.NestedString(o.Object, "spec", "image")
			clickedRepo = appcr.ParseImageRef(img).Repository
		}
	}
	seen := map[writeback.Edit]bool{}
	clickedFound := false
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group != req.Group || gvk.Kind != req.Kind {
			continue
		}
		img, _, _ := unstructured.NestedString(o.Object, "spec", "image")
		parsed, err := deployplan.ParseImage(img)
		if err != nil {
			continue // not an image the catalog covers: the plan reports it
		}
		ref := appcr.ParseImageRef(img)
		_, covered := cur.Lookup(parsed)
		clicked := o.GetName() == req.Name
		if !clicked && (!covered || !cur.TaggedWith(ref.Tag)) {
			continue
		}
		clickedFound = clickedFound || clicked
		to, err := mv.target(o.GetName(), ref, parsed, ref.Repository == clickedRepo, req.Version)
		if err != nil {
			return nil, err
		}
		if to == ref {
			continue // at the target already
		}
		ch := writeback.ImageChange{Dir: env.Source.Path, Kind: req.Kind, Name: o.GetName(), Repository: ref.Repository, Tag: to.Tag, Digest: to.Digest}
		edits, err := writeback.Locate(req.Tree, ch, req.MaxFile)
		if err != nil {
			return nil, &locateError{err}
		}
		if edits, err = stayInEnv(req.Tree, env, ch, edits, req.MaxFile); err != nil {
			return nil, err
		}
		for _, e := range edits {
			if !seen[e] {
				seen[e] = true
				mv.edits = append(mv.edits, e)
			}
		}
		mv.Moved = append(mv.Moved, MovedApp{Namespace: cmp.Or(o.GetNamespace(), env.Namespace), Name: o.GetName(), From: ref, To: to})
	}
	if !clickedFound {
		return nil, &checkError{fmt.Sprintf("%s no longer renders %s %s on branch %s: nothing was pushed", env.Source.Path, req.Kind, req.Name, req.Branch)}
	}
	slices.SortFunc(mv.Moved, func(a, b MovedApp) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return mv, nil
}

// findRevision walks the history of the catalog file for the newest
// revision in commit mode whose commit the tag version names, and makes it
// the move's target (the catalog edit first among the edits).
func (m *catalogMove) findRevision(ctx context.Context, tree fs.FS, env *envconfig.Environment, branch, version string) error {
	h, ok := tree.(writeback.FileHistory)
	if !ok {
		return fmt.Errorf("gitops: the tree of %s's repository has no history to read the catalog's revisions from", env.Name)
	}
	var (
		content    []byte
		unreadable int
	)
	walk, err := h.FileRevisions(m.Path, catalogHistoryCommits, deployplan.MaxCatalogBytes, func(r writeback.Revision) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("gitops: the history of %s: %w", m.Path, err)
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
func checkCatalogMove(ctx context.Context, env *envconfig.Environment, tree fs.FS, group, kind string, mv *catalogMove) error {
	cat, err := deployplan.ReadCatalogFS(tree, mv.Path)
	if err != nil {
		return &catalogError{fmt.Sprintf("after the edit, environment %s's catalog %s does not read (%v): nothing was pushed", env.Name, mv.Path, publicText(err, "see the server log"))}
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
