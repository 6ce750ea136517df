package helmrender

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// maxArchiveEntries caps the entries of one vendored chart archive.
const maxArchiveEntries = 10_000

// unpackCharts returns the chart's files for Helm's loader, with every
// vendored archive (charts/NAME.tgz, at any depth) unpacked in memory into
// a folder beside it: Helm's own archive loader allows 100 MiB per chart,
// here the chart and all its archives share max. An archive entry that is
// a link, or whose path leaves the archive, is refused.
func unpackCharts(name string, in map[string][]byte, max int64) ([]*archive.BufferedFile, error) {
	out := map[string][]byte{}
	var total int64
	var queue []string
	for p, data := range in {
		total += int64(len(data))
		out[p] = data
		queue = append(queue, p)
	}
	if total > max {
		return nil, &Error{Chart: name, Reason: fmt.Sprintf("the chart holds %d bytes, more than %d", total, max), Hint: "vendor fewer or smaller charts"}
	}
	sort.Strings(queue)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if !isVendoredArchive(p) {
			continue
		}
		data := out[p]
		delete(out, p)
		dir := strings.TrimSuffix(p, ".tgz")
		added, err := untar(name, p, data, max-total)
		if err != nil {
			return nil, err
		}
		var names []string
		for rel, d := range added {
			q := dir + "/" + rel
			if _, dup := out[q]; dup {
				return nil, &Error{Chart: name, File: p, Reason: "unpacks over " + q + ", which the chart already holds", Hint: "keep either the archive or the folder in charts/"}
			}
			out[q] = d
			total += int64(len(d))
			names = append(names, q)
		}
		sort.Strings(names)
		queue = append(queue, names...)
	}
	list := make([]*archive.BufferedFile, 0, len(out))
	for p, d := range out {
		list = append(list, &archive.BufferedFile{Name: p, Data: d})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list, nil
}

// isVendoredArchive reports whether p is an archive directly in a chart's
// charts/ folder (charts/x.tgz, charts/a/charts/x.tgz).
func isVendoredArchive(p string) bool {
	if !strings.HasSuffix(p, ".tgz") {
		return false
	}
	parts := strings.Split(p, "/")
	// charts, x.tgz | charts, a, charts, x.tgz | ...
	if len(parts)%2 != 0 {
		return false
	}
	for i := 0; i < len(parts)-1; i += 2 {
		if parts[i] != "charts" {
			return false
		}
	}
	return true
}

// untar reads a chart archive in memory, at most max bytes unpacked,
// and returns its files relative to its top folder.
func untar(name, file string, data []byte, max int64) (map[string][]byte, error) {
	bad := func(reason string) error {
		return &Error{Chart: name, File: file, Reason: reason, Hint: "vendor the chart as `helm package` or `helm dependency build` writes it"}
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, bad("not a gzip archive: " + err.Error())
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	var n int
	var size int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad("not a tar archive: " + err.Error())
		}
		if n++; n > maxArchiveEntries {
			return nil, bad(fmt.Sprintf("more than %d entries", maxArchiveEntries))
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader, tar.TypeXHeader:
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, bad(fmt.Sprintf("entry %s is a link (links are not followed)", h.Name))
		default:
			return nil, bad(fmt.Sprintf("entry %s is not a regular file", h.Name))
		}
		clean := path.Clean(strings.ReplaceAll(h.Name, `\`, "/"))
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, bad(fmt.Sprintf("entry %s leaves the archive", h.Name))
		}
		_, rel, ok := strings.Cut(clean, "/")
		if !ok || rel == "" {
			continue // a file beside the top folder: Helm ignores it too
		}
		if h.Size < 0 || size+h.Size > max {
			return nil, &Error{Chart: name, File: file, Reason: fmt.Sprintf("unpacks to more than %d bytes with the rest of the chart", max), Hint: "vendor fewer or smaller charts"}
		}
		b, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return nil, bad("entry " + h.Name + ": " + err.Error())
		}
		size += int64(len(b))
		out[rel] = b
	}
	return out, nil
}

// isLocalRepo reports whether a dependency's repository names no place to
// download from: "" (vendored by hand) or file://.
func isLocalRepo(repo string) bool {
	return repo == "" || strings.HasPrefix(repo, "file://")
}

// checkDependencies checks that every dependency of ch (at prefix in the
// chart: "" or "charts/x/") is vendored in its charts/ folder at a version
// Chart.yaml accepts, and that Chart.lock, when there is one (required as
// soon as a dependency comes from a repository), is in step with Chart.yaml
// (Helm's digest) and with the vendored versions.
func checkDependencies(name, prefix string, ch *chart.Chart) error {
	vendored := map[string]*chart.Chart{}
	for _, sub := range ch.Dependencies() {
		vendored[sub.Name()] = sub
	}
	remote := false
	for _, d := range ch.Metadata.Dependencies {
		if !isLocalRepo(d.Repository) {
			remote = true
		}
		sub, ok := vendored[d.Name]
		if !ok {
			e := &Error{Chart: name, File: prefix + "Chart.yaml", Reason: fmt.Sprintf("dependency %s is not vendored in %scharts/", d.Name, prefix)}
			if isLocalRepo(d.Repository) {
				e.Hint = fmt.Sprintf("copy the chart %s into %scharts/%s and commit it", d.Name, prefix, d.Name)
			} else {
				e.Reason = fmt.Sprintf("dependency %s %s from %s is not vendored in %scharts/ (deploy-web never downloads a chart)", d.Name, d.Version, d.Repository, prefix)
				e.Hint = fmt.Sprintf("run `helm dependency update` in the chart folder on a workstation and commit %scharts/%s-<version>.tgz with Chart.lock", prefix, d.Name)
			}
			return e
		}
		if d.Version != "" && !chartutil.IsCompatibleRange(d.Version, sub.Metadata.Version) {
			return &Error{Chart: name, File: prefix + "Chart.yaml", Reason: fmt.Sprintf("dependency %s asks for version %s; %scharts/ holds %s", d.Name, d.Version, prefix, sub.Metadata.Version),
				Hint: "vendor a matching version (`helm dependency update`) or fix the version in Chart.yaml"}
		}
	}
	switch {
	case ch.Lock == nil && remote:
		return &Error{Chart: name, File: prefix + "Chart.lock", Reason: "missing: the vendored dependencies from repositories cannot be checked",
			Hint: "run `helm dependency update` in the chart folder and commit Chart.lock with charts/"}
	case ch.Lock != nil:
		digest, err := hashReq(ch.Metadata.Dependencies, ch.Lock.Dependencies)
		if err != nil {
			return &Error{Chart: name, File: prefix + "Chart.lock", Reason: err.Error()}
		}
		if digest != ch.Lock.Digest {
			return &Error{Chart: name, File: prefix + "Chart.lock", Reason: "out of step with the dependencies of Chart.yaml (its digest is not theirs)",
				Hint: "run `helm dependency update` in the chart folder and commit Chart.lock with charts/"}
		}
		for _, l := range ch.Lock.Dependencies {
			sub, ok := vendored[l.Name]
			if !ok {
				return &Error{Chart: name, File: prefix + "Chart.lock", Reason: fmt.Sprintf("locks %s %s, which is not vendored in %scharts/", l.Name, l.Version, prefix),
					Hint: "run `helm dependency build` in the chart folder and commit charts/"}
			}
			if sub.Metadata.Version != l.Version {
				return &Error{Chart: name, File: prefix + "Chart.lock", Reason: fmt.Sprintf("locks %s at %s; %scharts/ holds %s", l.Name, l.Version, prefix, sub.Metadata.Version),
					Hint: "run `helm dependency build` in the chart folder and commit charts/"}
			}
		}
	}
	for _, sub := range ch.Dependencies() {
		if err := checkDependencies(name, prefix+"charts/"+sub.Name()+"/", sub); err != nil {
			return err
		}
	}
	return nil
}

// hashReq is Helm's Chart.lock digest (internal/resolver.HashReq): the
// SHA-256 of the JSON of Chart.yaml's dependencies and the lock's.
func hashReq(req, lock []*chart.Dependency) (string, error) {
	data, err := json.Marshal([2][]*chart.Dependency{req, lock})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
