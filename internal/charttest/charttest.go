// Package charttest reads the Helm charts kept as test data
// (deployplan/helmrender/testdata, the real public ones under public/)
// and packs a chart as `helm package` and `helm dependency build` leave
// it, for the tests of every package that renders charts.
package charttest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
)

// Dir is the folder of the test charts.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("charttest: no source location")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "deployplan", "helmrender", "testdata")
}

// Chart returns the files of the test chart name ("webapp",
// "public/podinfo"), keyed by their slash path under prefix ("" for the
// chart folder itself).
func Chart(t testing.TB, name, prefix string) map[string][]byte {
	t.Helper()
	root := filepath.Join(Dir(t), filepath.FromSlash(name))
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out[path.Join(prefix, filepath.ToSlash(rel))] = b
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("charttest: chart %s: %d files, %v", name, len(out), err)
	}
	return out
}

// Strings is files with string contents.
func Strings(files map[string][]byte) map[string]string {
	out := make(map[string]string, len(files))
	for p, b := range files {
		out[p] = string(b)
	}
	return out
}

// Pack packs files (paths relative to the chart folder) under the folder
// top into a gzipped tar, as `helm package` does, then the extra headers
// as they are (for hostile archives).
func Pack(t testing.TB, top string, files map[string][]byte, extra ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range extra {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
