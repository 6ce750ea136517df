package helmrender

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/ignore"
)

// maxHelmignoreBytes caps a chart's .helmignore: its rules are matched
// against every file of the chart.
const maxHelmignoreBytes = 64 << 10

// dropIgnored is files without those the chart's .helmignore (at its top,
// as `helm template DIR` reads it) excludes, with Helm's default rules
// added (templates/.?*): the files Helm's loader would never load from
// the chart's folder. A file under an ignored folder is ignored with it.
// Vendored subcharts keep their own files (an archive was packaged with
// its .helmignore applied; Helm reads no .helmignore inside charts/).
func dropIgnored(chart string, files map[string][]byte) (map[string][]byte, error) {
	rules := ignore.Empty()
	if data, ok := files[ignore.HelmIgnore]; ok {
		if len(data) > maxHelmignoreBytes {
			return nil, &Error{Chart: chart, File: ignore.HelmIgnore, Reason: fmt.Sprintf("%d bytes, more than %d", len(data), maxHelmignoreBytes), Hint: "keep .helmignore short"}
		}
		r, err := ignore.Parse(bytes.NewReader(data))
		if err != nil {
			return nil, &Error{Chart: chart, File: ignore.HelmIgnore, Reason: "does not parse: " + err.Error(), Hint: "fix the rules"}
		}
		rules = r
	}
	rules.AddDefaults()
	out := make(map[string][]byte, len(files))
	ignoredDir := map[string]bool{}
	isIgnoredDir := func(dir string) bool {
		v, ok := ignoredDir[dir]
		if !ok {
			v = rules.Ignore(dir, fileInfo{name: path.Base(dir), dir: true})
			ignoredDir[dir] = v
		}
		return v
	}
	for p, data := range files {
		skip := false
		parts := strings.Split(p, "/")
		for i := 1; i < len(parts) && !skip; i++ {
			skip = isIgnoredDir(strings.Join(parts[:i], "/"))
		}
		if skip || rules.Ignore(p, fileInfo{name: parts[len(parts)-1], size: int64(len(data))}) {
			continue
		}
		out[p] = data
	}
	return out, nil
}

// fileInfo is what ignore.Rules asks of a path.
type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (f fileInfo) Name() string { return f.name }
func (f fileInfo) Size() int64  { return f.size }
func (f fileInfo) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (f fileInfo) ModTime() time.Time { return time.Time{} }
func (f fileInfo) IsDir() bool        { return f.dir }
func (f fileInfo) Sys() any           { return nil }
