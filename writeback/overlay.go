package writeback

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/hanzoai/deploy-web/appcr"
)

// SetOverlayImage sets an App's spec.image through a patch that the
// kustomization File (an environment's own overlay) owns: an inline JSON
// 6902 patch targeting Kind/Name whose one operation sets /spec/image.
// The entry is added when the kustomization has none, edited in place when
// it has one (a later rollback finds it: Locate). It is how an
// environment overrides a version that lives in a file other environments
// render too (a shared base), without touching that file.
type SetOverlayImage struct {
	File       string
	Kind, Name string
	Image      string
}

// Target implements Edit.
func (e SetOverlayImage) Target() string { return e.File }

// overlayPatch is the text of SetOverlayImage's patch.
func overlayPatch(image string) string {
	return "- op: add\n  path: /spec/image\n  value: " + image + "\n"
}

// isOverlayPatch reports whether an entry of patches: is the form
// SetOverlayImage writes for kind/name: an inline patch, targeted at the
// App by kind and name, of one operation on /spec/image.
func isOverlayPatch(p types.Patch, kind, name string) bool {
	if p.Path != "" || p.Target == nil || p.Target.Kind != kind || p.Target.Name != name {
		return false
	}
	var ops []map[string]any
	if err := yaml.Unmarshal([]byte(p.Patch), &ops); err != nil || len(ops) != 1 {
		return false
	}
	return ops[0]["path"] == "/spec/image" && (ops[0]["op"] == "add" || ops[0]["op"] == "replace")
}

// Apply implements Edit.
func (e SetOverlayImage) Apply(cur []byte) ([]byte, error) {
	fail := func(format string, a ...any) error {
		return &EditError{File: e.File, Reason: fmt.Sprintf(format, a...)}
	}
	if ref := appcr.ParseImageRef(e.Image); ref.Repository == "" || ref.Tag == "" && ref.Digest == "" || strings.ContainsAny(e.Image, " \t\r\n") {
		return nil, fail("image %q: want repository:tag or repository@digest", e.Image)
	}
	nodes, err := readYAML(cur)
	if err != nil {
		return nil, fail("%v", err)
	}
	if len(nodes) != 1 {
		return nil, fail("a kustomization is one YAML document, the file has %d", len(nodes))
	}
	patches, err := nodes[0].Pipe(yaml.LookupCreate(yaml.SequenceNode, "patches"))
	if err != nil {
		return nil, fail("patches: %v", err)
	}
	if patches.YNode().Kind != yaml.SequenceNode {
		return nil, fail("patches: is not a list")
	}
	elems, err := patches.Elements()
	if err != nil {
		return nil, fail("patches: %v", err)
	}
	var found *yaml.RNode
	for _, el := range elems {
		var p types.Patch
		s, err := el.String()
		if err != nil || yaml.Unmarshal([]byte(s), &p) != nil {
			continue
		}
		if isOverlayPatch(p, e.Kind, e.Name) {
			if found != nil {
				return nil, fail("patches: two patches set %s %s's spec.image: keep one", e.Kind, e.Name)
			}
			found = el
		}
	}
	text := yaml.NewStringRNode(overlayPatch(e.Image))
	text.YNode().Style = yaml.LiteralStyle
	if found != nil {
		if err := found.PipeE(yaml.SetField("patch", text)); err != nil {
			return nil, fail("patches: %v", err)
		}
		return writeYAML(nodes)
	}
	entry := yaml.NewMapRNode(nil)
	target := yaml.NewMapRNode(&map[string]string{"kind": e.Kind, "name": e.Name})
	if err := entry.PipeE(yaml.SetField("target", target)); err != nil {
		return nil, fail("patches: %v", err)
	}
	if err := entry.PipeE(yaml.SetField("patch", text)); err != nil {
		return nil, fail("patches: %v", err)
	}
	if err := patches.PipeE(yaml.Append(entry.YNode())); err != nil {
		return nil, fail("patches: %v", err)
	}
	return writeYAML(nodes)
}

// OverlayOverride is the edit that sets c's image in Dir's own
// kustomization (SetOverlayImage), for a version declared outside Dir.
func OverlayOverride(fsys fs.FS, c ImageChange, maxFile int64) (Edit, error) {
	if maxFile <= 0 {
		maxFile = DefaultMaxFileBytes
	}
	dir := path.Clean(strings.TrimPrefix(c.Dir, "./"))
	if !fs.ValidPath(dir) {
		return nil, locateErrorf("folder %q is not inside the repository", c.Dir)
	}
	w := &locator{fsys: fsys, c: c, maxFile: maxFile, seen: map[string]bool{}}
	kf, _, err := w.kustomization(dir)
	if err != nil {
		return nil, err
	}
	if kf == "" {
		return nil, locateErrorf("%s has no kustomization", dir)
	}
	return SetOverlayImage{File: kf, Kind: c.Kind, Name: c.Name, Image: appcr.ImageRef{Repository: c.Repository, Tag: c.Tag, Digest: c.Digest}.String()}, nil
}
