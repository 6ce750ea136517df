package gitops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/writeback"
)

// sourceCatalog reads the source environment's catalog (readSourceCatalog)
// and says where it was read.
type sourceCatalog func() (*deployplan.Catalog, string, error)

// readSourceCatalog reads the catalog of environment src as its plan
// reads it: from tree (the head of branch of repository repo, which the
// write-back has fetched) when src's catalog is a file of that same
// repository and src follows that branch, else through a render of src
// (its repository at its ref, fetched under its limits, or its file on
// disk). It says where the catalog was read.
func readSourceCatalog(ctx context.Context, src *envconfig.Environment, repo, branch string, tree fs.FS) (*deployplan.Catalog, string, error) {
	if p, ok := src.CatalogInRepo(); ok && src.Source.Repo == repo && src.Source.Ref == branch {
		cat, err := deployplan.ReadCatalogFS(tree, p)
		return cat, p + " on " + branch, err
	}
	r, err := deployplan.Render(ctx, src)
	if err != nil {
		return nil, "", err
	}
	return r.Catalog, r.CatalogPath, nil
}

// promotionCatalogEdits are the edits of target's catalog a promotion of
// versions makes, read from tree (the target's branch head): when the
// catalog is a file of the repository in version mode and does not list
// a promoted release (repository and tag), the release's entry is copied
// from the source's catalog (id, image, tag, digest, published; never a
// digest of its own) and appended to the target's services. A release
// the source's catalog does not list either, or lists with another
// digest than the source declares, is refused: nothing is pushed. No
// edit for a catalog outside the repository, in commit mode, or listing
// every release already.
func promotionCatalogEdits(tree fs.FS, target *envconfig.Environment, sourceEnv string, versions []promotion.AppVersion, source sourceCatalog) ([]writeback.Edit, error) {
	p, ok := target.CatalogInRepo()
	if !ok {
		return nil, nil
	}
	cat, err := deployplan.ReadCatalogFS(tree, p)
	if err != nil {
		return nil, &catalogError{fmt.Sprintf("environment %s's catalog %s does not read (%v): fix it in the repository; nothing was pushed",
			target.Name, p, publicText(err, "see the server log"))}
	}
	if cat.Mode != deployplan.CatalogModeVersion {
		return nil, nil
	}
	ids := map[string]bool{}
	for _, s := range cat.Services {
		ids[s.ID] = true
	}
	// The source's catalog is read once, when a release is missing.
	var (
		src    *deployplan.Catalog
		where  string
		srcErr error
		read   bool
	)
	var add []deployplan.CatalogService
	added := map[string]bool{} // repository:tag of add (two Apps of one image)
	for _, v := range versions {
		img, err := deployplan.ParseImage(v.Image)
		if err != nil || img.Tag == "" || added[img.Repository+":"+img.Tag] || listsRelease(cat, img.Repository, img.Tag) {
			// A reference without a tag is no release of a version-mode
			// catalog: the plan says so.
			continue
		}
		if !read {
			src, where, srcErr = source()
			read = true
		}
		if srcErr != nil {
			return nil, &catalogError{fmt.Sprintf("environment %s's catalog does not list %s at %s, and %s's catalog, to copy the release from, could not be read (%s): nothing was pushed",
				target.Name, img.Repository, img.Tag, sourceEnv, publicText(srcErr, "see the server log"))}
		}
		e, ok := findRelease(src, img.Repository, img.Tag)
		switch {
		case !ok:
			return nil, &catalogError{fmt.Sprintf("environment %s's catalog %s does not list %s at %s, and neither does %s's catalog (%s), so its digest is unknown: list the release in %s's catalog first (a promotion copies it, never invents one); nothing was pushed",
				target.Name, p, img.Repository, img.Tag, sourceEnv, where, sourceEnv)}
		case v.Digest != "" && e.Digest != "" && e.Digest != v.Digest:
			return nil, &catalogError{fmt.Sprintf("%s declares %s at digest %s, but its catalog (%s) lists %s at %s with digest %s: fix %s first; nothing was pushed",
				sourceEnv, v.App, v.Digest, where, img.Tag, img.Repository, e.Digest, sourceEnv)}
		}
		// The source's spelling of the repository, without its (commit)
		// tag or digest: the entry's tag and digest say them.
		entry := deployplan.CatalogService{ID: freeID(ids, e.ID, img.Tag), Image: appcr.ParseImageRef(e.Image).Repository, Tag: img.Tag, Digest: e.Digest, Published: e.Published}
		ids[entry.ID] = true
		added[img.Repository+":"+img.Tag] = true
		add = append(add, entry)
	}
	if len(add) == 0 {
		return nil, nil
	}
	return []writeback.Edit{catalogAppend{File: p, Services: add}}, nil
}

// listsRelease reports whether a version-mode catalog lists repository
// repo at tag.
func listsRelease(c *deployplan.Catalog, repo, tag string) bool {
	for _, s := range c.Services {
		if img, err := deployplan.ParseImage(s.Image); err == nil && img.Repository == repo && s.Tag == tag {
			return true
		}
	}
	return false
}

// findRelease is the entry of repository repo at tag in a source
// catalog: in version mode the entry of that tag; in commit mode the
// repository's entry when tag is the catalog's commit (every image is
// tagged with it).
func findRelease(c *deployplan.Catalog, repo, tag string) (deployplan.CatalogService, bool) {
	for _, s := range c.Services {
		img, err := deployplan.ParseImage(s.Image)
		if err != nil || img.Repository != repo {
			continue
		}
		if c.Mode == deployplan.CatalogModeVersion && s.Tag == tag ||
			c.Mode != deployplan.CatalogModeVersion && (img.Tag == tag || tag == c.Commit) {
			return s, true
		}
	}
	return deployplan.CatalogService{}, false
}

// freeID is id when the catalog does not use it yet, else id-tag (a
// catalog naming its one release of api "api" gets "api-1.5.0"), else
// id-tag-2, -3, ...
func freeID(used map[string]bool, id, tag string) string {
	if !used[id] {
		return id
	}
	base := id + "-" + tag
	if !used[base] {
		return base
	}
	for n := 2; ; n++ {
		if c := fmt.Sprintf("%s-%d", base, n); !used[c] {
			return c
		}
	}
}

// catalogAppend appends Services to the services list of the catalog
// File, leaving every other byte of it as it was (its layout, its other
// keys), so a review shows the new entries alone. The result must parse
// as a catalog.
type catalogAppend struct {
	File     string
	Services []deployplan.CatalogService
}

// Target implements writeback.Edit.
func (e catalogAppend) Target() string { return e.File }

// Apply implements writeback.Edit.
func (e catalogAppend) Apply(cur []byte) ([]byte, error) {
	fail := func(format string, a ...any) error {
		return &writeback.EditError{File: e.File, Reason: fmt.Sprintf(format, a...)}
	}
	open, last, closing, err := servicesArray(cur)
	if err != nil {
		return nil, fail("%v", err)
	}
	indent, step := "", ""
	if last.start >= 0 {
		indent, step = layoutOf(cur, last.start, last.end)
	}
	var b bytes.Buffer
	for i, s := range e.Services {
		var enc []byte
		if step != "" {
			enc, err = json.MarshalIndent(s, indent, step)
		} else {
			enc, err = json.Marshal(s)
		}
		if err != nil {
			return nil, fail("encode the entry of %s: %v", s.ID, err)
		}
		if i > 0 || last.start >= 0 {
			b.WriteString(",")
		}
		if indent != "" || step != "" {
			b.WriteString("\n" + indent)
		}
		b.Write(enc)
	}
	at := open + 1 // an empty list: right after its [
	if last.start >= 0 {
		at = last.end
	}
	out := make([]byte, 0, len(cur)+b.Len())
	out = append(out, cur[:at]...)
	out = append(out, b.Bytes()...)
	if last.start < 0 && closing > at {
		out = append(out, cur[closing:]...) // an empty list's inner blanks go
	} else {
		out = append(out, cur[at:]...)
	}
	if _, err := deployplan.ParseCatalog(out); err != nil {
		return nil, fail("the catalog with the promoted releases does not read: %v", publicText(err, "see the server log"))
	}
	return out, nil
}

// byteSpan is a value's bytes [start, end) in a document; start -1: none.
type byteSpan struct{ start, end int }

// servicesArray finds the top-level "services" list of a JSON catalog:
// the offsets of its [ and ], and its last element.
func servicesArray(doc []byte) (open int, last byteSpan, closing int, err error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	last = byteSpan{-1, -1}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, last, 0, errors.New("the catalog is not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, last, 0, fmt.Errorf("not JSON: %v", err)
		}
		key, _ := t.(string)
		if key != "services" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, last, 0, fmt.Errorf("not JSON: %v", err)
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return 0, last, 0, errors.New("services is not a list")
		}
		open = int(dec.InputOffset()) - 1
		for dec.More() {
			var el json.RawMessage
			if err := dec.Decode(&el); err != nil {
				return 0, last, 0, fmt.Errorf("services: not JSON: %v", err)
			}
			end := int(dec.InputOffset())
			last = byteSpan{end - len(el), end}
		}
		if _, err := dec.Token(); err != nil {
			return 0, last, 0, fmt.Errorf("services: not JSON: %v", err)
		}
		// The rest of the document is kept as it is; the edited catalog
		// is parsed whole before it is written.
		closing = int(dec.InputOffset()) - 1
		return open, last, closing, nil
	}
	return 0, last, 0, errors.New("the catalog has no services list: add \"services\": [] first")
}

// layoutOf is how an element [start, end) of doc is laid out: the
// blanks before it on its line (indent; "" when it shares its line) and,
// for an element over several lines, the indentation step of its keys.
func layoutOf(doc []byte, start, end int) (indent, step string) {
	line := bytes.LastIndexByte(doc[:start], '\n') + 1
	if lead := doc[line:start]; len(bytes.TrimLeft(lead, " \t")) == 0 {
		indent = string(lead)
	}
	el := doc[start:end]
	nl := bytes.IndexByte(el, '\n')
	if nl < 0 {
		return indent, ""
	}
	next := el[nl+1:]
	blanks := next[:len(next)-len(bytes.TrimLeft(next, " \t"))]
	step = strings.TrimPrefix(string(blanks), indent)
	if step == "" || step == string(blanks) && indent != "" {
		step = "  "
	}
	return indent, step
}
