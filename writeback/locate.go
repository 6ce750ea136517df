package writeback

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/yamlbudget"
)

// ImageChange is a version change of one App's image, for Locate.
type ImageChange struct {
	// Dir is the environment's kustomize folder (source.path), relative
	// to the repository root.
	Dir string
	// Kind and Name identify the App as its file declares it
	// (metadata.name before any namePrefix).
	Kind, Name string
	// Repository is the image's repository (registry.example/org/api),
	// without tag or digest.
	Repository string
	// Tag and Digest are the new version; one may be empty.
	Tag, Digest string
}

// Bounds of Locate's walk over the kustomizations and their resources.
const (
	maxLocateKustomizations = 100
	maxLocateFiles          = 2000
	maxLocateBytes          = 64 << 20
)

// Locate decides which edits change c's image in the tree fsys (a checked
// out repository, the root being the repository root):
//
//   - the images: entry of Dir's kustomization whose name (or newName) is
//     the repository, when there is one (SetKustomizeImage);
//   - spec.image of the one document of kind Kind named Name in the
//     resources Dir's kustomization reaches, through folders and their
//     kustomizations, recursively (SetAppImage), keeping the repository
//     as that file writes it: when there is no such images: entry, and
//     also when there is one that does not reach spec.image. kustomize's
//     images: rewrites containers' images (a Job of the same image
//     follows it) but a custom resource's spec.image only when the
//     kustomization's configurations: declare that field (images: with
//     path spec/image for the kind); without that, the App keeps the
//     version of its own file.
//
// A workload without spec.image whose containers run the repository (a
// plain Deployment, CronJob or Pod, no App) is changed by the images:
// entry of Dir's kustomization alone (SetKustomizeImage: added when there
// is none, edited when there is): kustomize's images transformer reaches
// containers, so the file that declares the workload (a shared base) is
// never edited.
//
// An override the overlay owns (SetOverlayImage's inline patch of the
// App's spec.image in Dir's kustomization) is edited in place. Any other
// patch on the way that sets the App's spec.image would override the
// edits, so Locate refuses then, naming the kustomization; so it does when
// the App is in no file or in several. The walk reads at most
// maxLocateKustomizations kustomizations and maxLocateFiles files, each at
// most maxFile bytes; remote resources and symbolic links are skipped
// (rendering refuses them anyway), and nothing outside fsys is reached.
func Locate(fsys fs.FS, c ImageChange, maxFile int64) ([]Edit, error) {
	if maxFile <= 0 {
		maxFile = DefaultMaxFileBytes
	}
	dir := path.Clean(strings.TrimPrefix(c.Dir, "./"))
	if !fs.ValidPath(dir) {
		return nil, locateErrorf("folder %q is not inside the repository", c.Dir)
	}
	switch {
	case c.Kind == "" || c.Name == "":
		return nil, locateErrorf("the App's kind and name are required")
	case c.Tag == "" && c.Digest == "":
		return nil, locateErrorf("give a tag or a digest")
	}
	w := &locator{fsys: fsys, c: c, maxFile: maxFile, seen: map[string]bool{}}
	kf, k, err := w.kustomization(dir)
	if err != nil {
		return nil, err
	}
	if kf == "" {
		return nil, locateErrorf("%s has no kustomization", dir)
	}
	// The environment's own override (SetOverlayImage) is edited where it
	// is, unless the overlay also has an images: entry of the repository
	// (kustomize applies images: after patches: then it is refused below).
	hasEntry := slices.ContainsFunc(k.Images, func(im types.Image) bool {
		return c.Repository != "" && (im.Name == c.Repository || im.NewName == c.Repository)
	})
	for _, p := range k.Patches {
		if !hasEntry && isOverlayPatch(p, c.Kind, c.Name) {
			return []Edit{SetOverlayImage{File: kf, Kind: c.Kind, Name: c.Name, Image: appcr.ImageRef{Repository: c.Repository, Tag: c.Tag, Digest: c.Digest}.String()}}, nil
		}
	}
	var edits []Edit
	for _, im := range k.Images {
		if c.Repository != "" && (im.Name == c.Repository || im.NewName == c.Repository) {
			edits = append(edits, SetKustomizeImage{File: kf, Name: im.Name, NewTag: c.Tag, Digest: c.Digest})
			break
		}
	}
	if len(edits) > 0 {
		reaches, err := w.imagesReachSpecImage(kf, k)
		if err != nil {
			return nil, err
		}
		if reaches {
			if err := w.patches(kf, k); err != nil {
				return nil, err
			}
			return edits, nil
		}
	}
	if err := w.walk(dir, kf, k); err != nil {
		return nil, err
	}
	switch len(w.found) {
	case 0:
		msg := fmt.Sprintf("no %s %s in the files %s reaches", c.Kind, c.Name, kf)
		if len(w.links) > 0 {
			msg += fmt.Sprintf(" (symbolic links skipped: %s)", strings.Join(w.links, ", "))
		}
		return nil, &LocateError{public: "locate: " + msg}
	case 1:
	default:
		return nil, locateErrorf("%s %s is declared in %s: keep one declaration", c.Kind, c.Name, strings.Join(w.found, ", "))
	}
	if w.image == "" && c.Repository != "" && slices.ContainsFunc(w.containers, func(img string) bool { return appcr.ParseImageRef(img).Repository == c.Repository }) {
		// A workload's container image (a Deployment of no App): the
		// images: entry of Dir's own kustomization reaches it wherever the
		// workload is declared (kustomize's images transformer rewrites
		// containers, after the patches), so the file that declares it,
		// perhaps a base other environments render, is never edited.
		if len(edits) > 0 {
			return edits, nil // the entry is there: edit it
		}
		return []Edit{SetKustomizeImage{File: kf, Name: c.Repository, NewTag: c.Tag, Digest: c.Digest}}, nil
	}
	ref := appcr.ParseImageRef(w.image)
	if c.Repository != "" && ref.Repository != c.Repository {
		return nil, locateErrorf("%s %s in %s has image %q, not of %s", c.Kind, c.Name, w.found[0], w.image, c.Repository)
	}
	ref.Tag, ref.Digest = c.Tag, c.Digest
	return append(edits, SetAppImage{File: w.found[0], Kind: c.Kind, Name: c.Name, Image: ref.String()}), nil
}

// imagesReachSpecImage reports whether the images: of kustomization kf
// rewrite the App's spec.image: whether one of its configurations: files
// declares an images field spec at path spec/image for the App's kind (or
// for every kind).
func (w *locator) imagesReachSpecImage(kf string, k *types.Kustomization) (bool, error) {
	for _, cf := range k.Configurations {
		p := path.Join(path.Dir(kf), cf)
		if isRemote(cf) || path.IsAbs(cf) || !fs.ValidPath(p) {
			continue // rendering refuses it
		}
		b, ok, err := w.read(p)
		if err != nil || !ok {
			return false, err
		}
		var tc struct {
			Images []struct {
				Path string `json:"path"`
				Kind string `json:"kind"`
			} `json:"images"`
		}
		if err := yaml.Unmarshal(b, &tc); err != nil {
			return false, locateErrorf("%s: %v", p, err)
		}
		for _, fsp := range tc.Images {
			if strings.Trim(fsp.Path, "/") == "spec/image" && (fsp.Kind == "" || fsp.Kind == w.c.Kind) {
				return true, nil
			}
		}
	}
	return false, nil
}

type locator struct {
	fsys    fs.FS
	c       ImageChange
	maxFile int64
	seen    map[string]bool
	kusts   int
	files   int
	bytes   int64
	found   []string
	image   string
	// containers are the found document's container images.
	containers []string
	links      []string
}

// read reads a file within the walk's budget; a symbolic link or
// anything else than a regular file is ("", false).
func (w *locator) read(p string) ([]byte, bool, error) {
	fi, err := fs.Lstat(w.fsys, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, locateErrorf("%s: %w", p, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		w.links = append(w.links, p)
		return nil, false, nil
	}
	if !fi.Mode().IsRegular() {
		return nil, false, nil
	}
	w.files++
	w.bytes += fi.Size()
	switch {
	case fi.Size() > w.maxFile:
		return nil, false, &TooLargeError{What: "file " + p, Limit: "MaxFileBytes", Max: w.maxFile}
	case w.files > maxLocateFiles:
		return nil, false, locateErrorf("more than %d files reached from %s", maxLocateFiles, w.c.Dir)
	case w.bytes > maxLocateBytes:
		return nil, false, locateErrorf("more than %d bytes reached from %s", maxLocateBytes, w.c.Dir)
	}
	b, err := fs.ReadFile(w.fsys, p)
	if err != nil {
		return nil, false, locateErrorf("%s: %w", p, err)
	}
	// Every file read here is YAML, and sigs.k8s.io/yaml expands aliases.
	if _, err := yamlbudget.Check(p, b, yamlbudget.Budget{MaxBytes: int(w.maxFile)}); err != nil {
		return nil, false, locateErrorf("%w", err)
	}
	return b, true, nil
}

// kustomization reads dir's kustomization file; "" when there is none.
func (w *locator) kustomization(dir string) (string, *types.Kustomization, error) {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := path.Join(dir, n)
		b, ok, err := w.read(p)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			continue
		}
		w.kusts++
		if w.kusts > maxLocateKustomizations {
			return "", nil, locateErrorf("more than %d kustomizations reached from %s", maxLocateKustomizations, w.c.Dir)
		}
		var k types.Kustomization
		if err := yaml.Unmarshal(b, &k); err != nil {
			return "", nil, locateErrorf("%s: %v", p, err)
		}
		return p, &k, nil
	}
	return "", nil, nil
}

// walk visits the resources of kustomization kf (in dir), depth first.
func (w *locator) walk(dir, kf string, k *types.Kustomization) error {
	if err := w.patches(kf, k); err != nil {
		return err
	}
	//lint:ignore SA1019 kustomize still reads bases
	entries := slices.Concat(k.Resources, k.Bases, k.Components)
	for _, e := range entries {
		if isRemote(e) || path.IsAbs(e) {
			continue
		}
		p := path.Join(dir, e)
		if !fs.ValidPath(p) {
			return locateErrorf("%s: resource %q leaves the repository", kf, e)
		}
		if w.seen[p] {
			continue
		}
		w.seen[p] = true
		fi, err := fs.Lstat(w.fsys, p)
		switch {
		case err != nil:
			continue // kustomize reports it when it renders
		case fi.Mode()&fs.ModeSymlink != 0:
			w.links = append(w.links, p)
		case fi.IsDir():
			skf, sk, err := w.kustomization(p)
			if err != nil {
				return err
			}
			if skf != "" {
				if err := w.walk(p, skf, sk); err != nil {
					return err
				}
			}
		default:
			if err := w.resourceFile(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// resourceFile looks for the App in a file of documents.
func (w *locator) resourceFile(p string) error {
	b, ok, err := w.read(p)
	if err != nil || !ok {
		return err
	}
	docs, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return locateErrorf("%s is not YAML: %v", p, err)
	}
	for _, d := range docs {
		if m, err := d.GetMeta(); err == nil && m.Kind == w.c.Kind && m.Name == w.c.Name {
			w.found = append(w.found, p)
			img, _ := d.Pipe(kyaml.Lookup("spec", "image"))
			if img != nil {
				w.image = kyaml.GetValue(img)
			}
			w.containers = containerImages(d)
		}
	}
	return nil
}

// podSpecPaths are where a workload kind keeps its pod spec: a Pod, a
// Deployment (StatefulSet, DaemonSet, Job, ReplicaSet), a CronJob.
var podSpecPaths = [][]string{{"spec"}, {"spec", "template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}}

// containerImages are the images of a document's containers and init
// containers, at any of podSpecPaths.
func containerImages(d *kyaml.RNode) []string {
	var out []string
	for _, p := range podSpecPaths {
		for _, field := range []string{"containers", "initContainers"} {
			list, err := d.Pipe(kyaml.Lookup(append(slices.Clone(p), field)...))
			if err != nil || list == nil || list.YNode().Kind != kyaml.SequenceNode {
				continue
			}
			for _, c := range list.Content() {
				if img, err := kyaml.NewRNode(c).Pipe(kyaml.Lookup("image")); err == nil && img != nil {
					out = append(out, kyaml.GetValue(img))
				}
			}
		}
	}
	return out
}

// patches refuses a kustomization with a patch that sets the App's
// spec.image: it is applied after the resources and images:, so an edit
// elsewhere would not change what is rendered.
func (w *locator) patches(kf string, k *types.Kustomization) error {
	dir := path.Dir(kf)
	type patch struct{ text, file, kind, name string }
	var ps []patch
	//lint:ignore SA1019 kustomize still reads patchesJson6902 and patchesStrategicMerge
	json6902, psm := k.PatchesJson6902, k.PatchesStrategicMerge
	for _, p := range slices.Concat(k.Patches, json6902) {
		q := patch{text: p.Patch, file: p.Path}
		if p.Target != nil {
			q.kind, q.name = p.Target.Kind, p.Target.Name
		}
		ps = append(ps, q)
	}
	for _, p := range psm {
		s := strings.TrimSpace(string(p))
		if !strings.Contains(s, "\n") && !strings.HasPrefix(s, "{") {
			ps = append(ps, patch{file: s})
		} else {
			ps = append(ps, patch{text: s})
		}
	}
	for _, p := range ps {
		if p.file != "" && !isRemote(p.file) && !path.IsAbs(p.file) && fs.ValidPath(path.Join(dir, p.file)) {
			b, ok, err := w.read(path.Join(dir, p.file))
			if err != nil {
				return err
			}
			if ok {
				p.text = string(b)
			}
		}
		if p.text == "" || (p.kind != "" && p.kind != w.c.Kind) || (p.name != "" && p.name != w.c.Name) {
			continue
		}
		if w.patchSetsImage(p.text, p.kind != "") {
			return locateErrorf("%s: a patch sets %s %s's spec.image, and would override the edit: move the version into the images: entry or the App's file", kf, w.c.Kind, w.c.Name)
		}
	}
	return nil
}

// patchSetsImage reports whether a patch's text sets spec.image of the
// App: a JSON 6902 operation on /spec/image (targeted is true when the
// patch's target names the App or matches it loosely), or a strategic
// merge patch of the App with spec.image.
func (w *locator) patchSetsImage(text string, targeted bool) bool {
	if targeted && strings.Contains(text, "/spec/image") {
		return true
	}
	docs, err := (&kio.ByteReader{Reader: strings.NewReader(text), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return false
	}
	for _, d := range docs {
		m, err := d.GetMeta()
		if err != nil || m.Kind != w.c.Kind || m.Name != w.c.Name {
			continue
		}
		if img, _ := d.Pipe(kyaml.Lookup("spec", "image")); img != nil {
			return true
		}
	}
	return false
}

// isRemote reports whether a kustomization entry is a URL or another
// remote form (mirrors deployplan's isRemoteRef: anything with a scheme, a
// query, or ':' or '@' in its first element).
func isRemote(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	if strings.Contains(l, "://") || strings.HasPrefix(l, "git::") || strings.HasPrefix(l, "github.com") || strings.Contains(l, "?") {
		return true
	}
	first, _, _ := strings.Cut(l, "/")
	return strings.ContainsAny(first, "@:")
}

// LocateError is Locate's refusal to find the edit: the App's image is in
// no file or in several, behind a patch, or in a file that cannot be
// read. Public names the App, the files and the reason, in words a user
// may read; Err is the cause, if any.
type LocateError struct {
	public string
	Err    error
}

func (e *LocateError) Error() string { return "writeback: " + e.public }

// Public is the refusal in words a user may read.
func (e *LocateError) Public() string { return e.public }

func (e *LocateError) Unwrap() error { return e.Err }

// locateErrorf is the *LocateError of a message (%w keeps its cause).
func locateErrorf(format string, a ...any) error {
	w := fmt.Errorf(format, a...)
	return &LocateError{public: "locate: " + w.Error(), Err: errors.Unwrap(w)}
}
