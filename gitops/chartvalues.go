package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/writeback"
)

// An App rendered from a Helm chart keeps its version in the chart's
// values, not in a file of manifests: a write-back finds the value by
// rendering. Every value of the chart's values (the chart's values.yaml,
// the environment's values files, inline values) that equals the App's
// rendered image, its tag or its digest is a candidate; each candidate is
// set to a probe in the place the environment may write (its own values
// file or the overlay's valuesInline, never the chart's values.yaml) and
// the environment is rendered: the candidates whose probe reaches the
// App's spec.image are the keys that hold it. One key per part (the whole
// image; or a tag, with or without a digest key; or a digest) is edited;
// several keys of one part, or none, are refused, saying what to add.

// Parts of an image a values key may hold.
const (
	partImage  = "image"  // registry/repo:tag[@digest]
	partTag    = "tag"    // tag, or tag@digest
	partDigest = "digest" // sha256:...
)

// Bounds of the values walk and the probes.
const (
	maxValuesLeaves     = 20000
	maxValuesDepth      = 16
	maxValuesCandidates = 16
)

// probeTag and probeDigest are what a candidate is set to when probed: a
// version no release has.
const (
	probeTag    = "0.0.0-deploy-web-probe"
	probeDigest = "sha256:d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0"
)

// valueKey is one value of a chart's merged values: where it is set last.
type valueKey struct {
	chart int // index of the deployplan.ChartValues
	path  []string
	value string
	// layer is the highest layer setting it.
	layer int
	part  string
}

func (k valueKey) name() string { return strings.Join(k.path, ".") }

// chartValuesEdits are the edits that set App (group, kind, name) to
// want in the charts env renders from tree. ok is false when env renders
// no chart (the App's version is in its manifests: Locate's job).
func chartValuesEdits(ctx context.Context, tree fs.FS, env *envconfig.Environment, group, kind, name string, want appcr.ImageRef) (_ []writeback.Edit, ok bool, _ error) {
	charts, err := deployplan.ChartValuesOf(ctx, env, tree)
	if err != nil || len(charts) == 0 {
		if env.Source.Helm != nil {
			return nil, true, chartRefusal("environment %s's chart cannot be read (%v)", env.Name, err)
		}
		return nil, false, nil
	}
	objs, err := deployplan.RenderFS(ctx, env, tree)
	if err != nil {
		return nil, true, chartRefusal("environment %s does not render (%v)", env.Name, err)
	}
	cur, found := appImage(objs, group, kind, name)
	if !found {
		return nil, false, nil
	}
	if cur == "" {
		return nil, true, chartRefusal("environment %s renders %s %s without spec.image", env.Name, kind, name)
	}
	keys, err := imageKeys(charts, cur)
	if err != nil {
		return nil, true, err
	}
	if len(keys) == 0 && env.Source.Helm == nil {
		// No chart of the overlay has a value of the App's image: the
		// App is in its manifests (Locate's answer says why it failed).
		return nil, false, nil
	}
	var (
		held  []valueKey
		edits []writeback.SetValues
		stuck []string
	)
	for _, k := range keys {
		e, why := valuesEdit(env, charts[k.chart], k)
		if why != "" {
			stuck = append(stuck, why)
			continue
		}
		e.Set[0].Value = probeValue(k.part, appcr.ParseImageRef(cur).Repository)
		img, err := renderWithEdit(ctx, env, tree, e, group, kind, name)
		if err != nil {
			return nil, true, err
		}
		if strings.Contains(img, probeTag) || strings.Contains(img, probeDigest) {
			held = append(held, k)
			edits = append(edits, e)
		}
	}
	if len(held) == 0 {
		if len(stuck) > 0 {
			return nil, true, chartRefusal("%s", strings.Join(stuck, "; "))
		}
		return nil, true, chartRefusal("no value of the chart's values holds %s %s's image %q (%s renders it from a value deploy-web cannot find): add image.repository and image.tag (or image: \"repository:tag\") to the environment's values file and use them in the chart's template",
			kind, name, cur, env.Source.Path)
	}
	byPart := map[string][]int{}
	for i, k := range held {
		byPart[k.part] = append(byPart[k.part], i)
	}
	for _, part := range []string{partImage, partTag, partDigest} {
		if len(byPart[part]) > 1 {
			var names []string
			for _, i := range byPart[part] {
				names = append(names, held[i].name())
			}
			return nil, true, chartRefusal("%s %s's image is set by several values (%s): keep one key for the %s, so a write-back knows which to change", kind, name, strings.Join(names, ", "), part)
		}
	}
	one := func(part string) (valueKey, writeback.SetValues, bool) {
		if is := byPart[part]; len(is) == 1 {
			return held[is[0]], edits[is[0]], true
		}
		return valueKey{}, writeback.SetValues{}, false
	}
	_, ei, hasImage := one(partImage)
	kt, et, hasTag := one(partTag)
	kd, ed, hasDigest := one(partDigest)
	switch {
	case hasImage && (hasTag || hasDigest):
		return nil, true, chartRefusal("%s %s's image is set by the whole image and by its parts (%s): keep one form", kind, name, strings.Join(heldNames(held), ", "))
	case hasImage:
		ei.Set[0].Value = want.String()
		return []writeback.Edit{ei}, true, nil
	case hasTag:
		if want.Tag == "" {
			return nil, true, chartRefusal("the chart sets %s %s's image by tag (%s): give a tag", kind, name, kt.name())
		}
		et.Set[0].Value = want.Tag
		out := []writeback.Edit{et}
		switch {
		case hasDigest:
			ed.Set[0].Value = want.Digest
			out = append(out, ed)
		case want.Digest != "":
			et.Set[0].Value = want.Tag + "@" + want.Digest
			out[0] = et
		}
		return mergeValueEdits(out), true, nil
	default: // a digest key alone
		if want.Digest == "" {
			return nil, true, chartRefusal("the chart pins %s %s's image by digest (%s) and has no tag key: give a digest, or add image.tag to the environment's values file and use it in the chart's template", kind, name, kd.name())
		}
		ed.Set[0].Value = want.Digest
		return []writeback.Edit{ed}, true, nil
	}
}

func heldNames(ks []valueKey) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.name()
	}
	return out
}

// mergeValueEdits makes edits of one file one edit, in order.
func mergeValueEdits(in []writeback.Edit) []writeback.Edit {
	var out []writeback.Edit
	for _, e := range in {
		sv := e.(writeback.SetValues)
		merged := false
		for i, o := range out {
			if ov := o.(writeback.SetValues); ov.File == sv.File && ov.Chart == sv.Chart {
				ov.Set = append(slices.Clone(ov.Set), sv.Set...)
				out[i], merged = ov, true
			}
		}
		if !merged {
			out = append(out, sv)
		}
	}
	return out
}

func chartRefusal(format string, a ...any) *Error {
	return &Error{Kind: KindUnprocessable, Reason: "ChartValues", Public: fmt.Sprintf(format, a...) + "; nothing was pushed"}
}

// probeValue is what a key of part is set to when probed.
func probeValue(part, repo string) string {
	switch part {
	case partImage:
		return repo + ":" + probeTag
	case partDigest:
		return probeDigest
	}
	return probeTag
}

// appImage is spec.image of the App group/kind/name among objs.
func appImage(objs []*unstructured.Unstructured, group, kind, name string) (string, bool) {
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group == group && gvk.Kind == kind && o.GetName() == name {
			img, _, _ := unstructured.NestedString(o.Object, "spec", "image")
			return img, true
		}
	}
	return "", false
}

// imageKeys are the values of charts that equal cur (a rendered image),
// its tag (alone or with its digest) or its digest, each where it is set
// last, in a stable order.
func imageKeys(charts []deployplan.ChartValues, cur string) ([]valueKey, error) {
	ref := appcr.ParseImageRef(cur)
	partOf := func(v string) string {
		switch {
		case v == cur:
			return partImage
		case ref.Tag != "" && (v == ref.Tag || ref.Digest != "" && v == ref.Tag+"@"+ref.Digest):
			return partTag
		case ref.Digest != "" && v == ref.Digest:
			return partDigest
		}
		return ""
	}
	var out []valueKey
	for ci, c := range charts {
		last := map[string]valueKey{}
		leaves := 0
		for li, l := range c.Layers {
			err := walkValues(l.Values, nil, &leaves, func(p []string, v string) {
				last[strings.Join(p, "\x00")] = valueKey{chart: ci, path: p, value: v, layer: li}
			})
			if err != nil {
				return nil, chartRefusal("%s: %v", layerName(c, l), err)
			}
		}
		for _, k := range last {
			if k.part = partOf(k.value); k.part != "" {
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].chart != out[j].chart {
			return out[i].chart < out[j].chart
		}
		return out[i].name() < out[j].name()
	})
	if len(out) > maxValuesCandidates {
		return nil, chartRefusal("%d values of the charts equal the image %q or its parts (at most %d are probed): keep the image in one key", len(out), cur, maxValuesCandidates)
	}
	return out, nil
}

// walkValues calls leaf for every string or number of v, with its path;
// deeper than maxValuesDepth or more than maxValuesLeaves leaves is an
// error.
func walkValues(v map[string]any, p []string, leaves *int, leaf func([]string, string)) error {
	if len(p) >= maxValuesDepth {
		return fmt.Errorf("values nested deeper than %d keys", maxValuesDepth)
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		*leaves++
		if *leaves > maxValuesLeaves {
			return fmt.Errorf("more than %d values", maxValuesLeaves)
		}
		q := append(slices.Clone(p), k)
		switch x := v[k].(type) {
		case map[string]any:
			if err := walkValues(x, q, leaves, leaf); err != nil {
				return err
			}
		case string:
			leaf(q, x)
		case int64:
			leaf(q, strconv.FormatInt(x, 10))
		case float64:
			leaf(q, strconv.FormatFloat(x, 'f', -1, 64))
		}
	}
	return nil
}

// layerName names a values layer in a refusal.
func layerName(c deployplan.ChartValues, l deployplan.ValuesLayer) string {
	switch l.Inline {
	case deployplan.InlineSource:
		return "source.helm.values"
	case deployplan.InlineHelmCharts:
		return c.Kustomization + " helmCharts " + c.Entry + " valuesInline"
	}
	return l.File
}

// valuesEdit is the edit that sets key k of chart c where env may write
// (value left empty), or why there is no such place: the layer that sets
// k last when env owns it, else env's own layer above it (its last values
// file, else the overlay's valuesInline). The chart's values.yaml is never
// written, nor a file outside env's folder in a kustomization's
// helmCharts, nor the environments file's source.helm.values.
func valuesEdit(env *envconfig.Environment, c deployplan.ChartValues, k valueKey) (writeback.SetValues, string) {
	own := func(l deployplan.ValuesLayer) bool {
		switch {
		case l.Inline == deployplan.InlineSource:
			return false
		case l.Inline == deployplan.InlineHelmCharts:
			return inEnv(env, c.Kustomization)
		case l.File == path.Join(c.Chart, "values.yaml"):
			return false
		case c.Kustomization != "":
			return inEnv(env, l.File)
		}
		return true // one of source.helm.valueFiles
	}
	edit := func(l deployplan.ValuesLayer) writeback.SetValues {
		set := []writeback.ValueSet{{Path: k.path}}
		if l.Inline == deployplan.InlineHelmCharts {
			return writeback.SetValues{File: c.Kustomization, Chart: c.Entry, Set: set}
		}
		return writeback.SetValues{File: l.File, Set: set}
	}
	top := c.Layers[k.layer]
	if own(top) {
		return edit(top), ""
	}
	if top.Inline == deployplan.InlineSource {
		return writeback.SetValues{}, fmt.Sprintf("source.helm.values of environment %s sets %s, over every values file: move it to the environment's values file (source.helm.valueFiles) so a write-back can change it", env.Name, k.name())
	}
	// Above the layer that sets it: the environment's own file, else its
	// inline values.
	for _, inline := range []bool{false, true} {
		for i := len(c.Layers) - 1; i > k.layer; i-- {
			if l := c.Layers[i]; (l.Inline != "") == inline && own(l) {
				return edit(l), ""
			}
		}
	}
	return writeback.SetValues{}, fmt.Sprintf("%s sets %s (the image of the App) and environment %s has no values file of its own to override it: add one (source.helm.valueFiles, or the valuesFile of the overlay's helmCharts entry)", layerName(c, top), k.name(), env.Name)
}

// renderWithEdit renders env from tree with edit e applied, and returns
// the App's spec.image ("" when it is not rendered).
func renderWithEdit(ctx context.Context, env *envconfig.Environment, tree fs.FS, e writeback.SetValues, group, kind, name string) (string, error) {
	cur, err := fs.ReadFile(tree, e.Target())
	if err != nil {
		return "", chartRefusal("%s cannot be read (%v)", e.Target(), err)
	}
	out, err := e.Apply(cur)
	if err != nil {
		var ee *writeback.EditError
		if errors.As(err, &ee) {
			return "", chartRefusal("the edit of %s cannot be made: %s", ee.File, ee.Reason)
		}
		return "", err
	}
	objs, err := deployplan.RenderFS(ctx, env, editedFS{FS: tree, files: map[string][]byte{e.Target(): out}})
	if err != nil {
		return "", nil // a probe that breaks the render does not hold the image
	}
	img, _ := appImage(objs, group, kind, name)
	return img, nil
}

// editedFS is a tree with some files' content replaced.
type editedFS struct {
	fs.FS
	files map[string][]byte
}

func (e editedFS) Open(name string) (fs.File, error) {
	b, ok := e.files[name]
	if !ok {
		return e.FS.Open(name)
	}
	fi, err := fs.Stat(e.FS, name)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(b), info: sizedInfo{fi, int64(len(b))}}, nil
}

func (e editedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := fs.ReadDir(e.FS, name)
	if err != nil {
		return nil, err
	}
	for i, d := range ents {
		if b, ok := e.files[path.Join(name, d.Name())]; ok {
			ents[i] = sizedEntry{d, int64(len(b))}
		}
	}
	return ents, nil
}

type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (s sizedInfo) Size() int64 { return s.size }

type sizedEntry struct {
	fs.DirEntry
	size int64
}

func (s sizedEntry) Info() (fs.FileInfo, error) {
	fi, err := s.DirEntry.Info()
	if err != nil {
		return nil, err
	}
	return sizedInfo{fi, s.size}, nil
}

type memFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }
func (m *memFile) Close() error               { return nil }

// versionEdits are the edits that set the image of App group/ch.Kind/
// ch.Name to ch's version in env's tree: in the chart's values when env
// renders the App from a chart (chartValuesEdits), else Locate's, kept in
// env's folder (stayInEnv).
func versionEdits(ctx context.Context, tree fs.FS, env *envconfig.Environment, group string, ch writeback.ImageChange, maxFile int64) ([]writeback.Edit, error) {
	ctx, cancel := context.WithTimeout(ctx, writeback.EnvLimits(env).Timeout)
	defer cancel()
	want := appcr.ImageRef{Repository: ch.Repository, Tag: ch.Tag, Digest: ch.Digest}
	if env.Source.Helm != nil {
		edits, ok, err := chartValuesEdits(ctx, tree, env, group, ch.Kind, ch.Name, want)
		if !ok && err == nil {
			err = chartRefusal("environment %s's chart renders no %s %s", env.Name, ch.Kind, ch.Name)
		}
		return edits, err
	}
	edits, err := writeback.Locate(tree, ch, maxFile)
	if err != nil {
		// Not in the manifests: perhaps in a chart of the overlay's
		// helmCharts.
		if cedits, ok, cerr := chartValuesEdits(ctx, tree, env, group, ch.Kind, ch.Name, want); ok {
			return cedits, cerr
		}
		return nil, &locateError{err}
	}
	return stayInEnv(tree, env, ch, edits, maxFile)
}
