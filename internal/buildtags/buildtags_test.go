package buildtags

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the module's root, two folders up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// makefileTags is the Makefile's GO_TAGS, and the problems of its recipes:
// every go build, test, vet, run and staticcheck of this module (not the
// control plane's, which build other modules under tools/) must pass
// -tags $(GO_TAGS).
func makefileTags(t *testing.T, makefile string) (string, []string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^GO_TAGS\s*:?=\s*(\S+)\s*$`).FindStringSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile sets no GO_TAGS")
	}
	var bad []string
	cmdRE := regexp.MustCompile(`\$\(GO\) (build|test|vet|run|tool staticcheck)\b`)
	for i, line := range strings.Split(makefile, "\n") {
		if !cmdRE.MatchString(line) || strings.Contains(line, "cd tools/") {
			continue
		}
		if !strings.Contains(line, "-tags $(GO_TAGS)") {
			bad = append(bad, "Makefile:"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
		}
	}
	return m[1], bad
}

// dockerfileTags is the -tags of the Dockerfile's go build (every one
// must carry the same).
func dockerfileTags(t *testing.T, dockerfile string) string {
	t.Helper()
	var tags []string
	for _, line := range strings.Split(dockerfile, "\n") {
		if !strings.Contains(line, "go build") || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		m := regexp.MustCompile(`-tags[ =](\S+)`).FindStringSubmatch(line)
		if m == nil {
			t.Errorf("Dockerfile: %q builds without -tags", strings.TrimSpace(line))
			continue
		}
		tags = append(tags, m[1])
	}
	if len(tags) == 0 {
		t.Fatal("the Dockerfile has no go build")
	}
	for _, tg := range tags[1:] {
		if tg != tags[0] {
			t.Errorf("the Dockerfile builds with -tags %s and %s", tags[0], tg)
		}
	}
	return tags[0]
}

// deps lists the packages ./cmd/deploy-web links with the given tags.
func deps(t *testing.T, root, tags string) []string {
	t.Helper()
	args := []string{"list", "-deps"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, "./cmd/deploy-web")...)
	cmd.Dir = root
	// The flags under test are the ones given, not the caller's GOFLAGS.
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.Fields(string(out))
}

// TestBuildsLeaveOutGoPlugin: the binary the Makefile builds and the one
// the Dockerfile builds do not link Go's plugin package; every Makefile
// recipe that builds, tests, vets or checks this module passes the tags;
// the binaries tests build (go build in a _test.go file) pass Tags. A
// plain build does link it (the control: else this test proves nothing).
func TestBuildsLeaveOutGoPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list on the whole binary")
	}
	root := repoRoot(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	mk, bad := makefileTags(t, string(makefile))
	for _, b := range bad {
		t.Errorf("%s: no -tags $(GO_TAGS)", b)
	}
	dk := dockerfileTags(t, string(dockerfile))
	for what, tags := range map[string]string{"Makefile GO_TAGS": mk, "Dockerfile": dk, "buildtags.Tags": Tags} {
		if !slices.Contains(strings.Split(tags, ","), NoGoPlugin) {
			t.Errorf("%s = %q, want it to hold %s", what, tags, NoGoPlugin)
		}
	}

	// The binaries tests build.
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "tools" || d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, `"go", "build"`) && !strings.Contains(line, `"-tags", buildtags.Tags`) {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s:%d builds a binary without buildtags.Tags: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	if !slices.Contains(deps(t, root, ""), "plugin") {
		t.Fatal("a plain build of ./cmd/deploy-web does not link the plugin package: this check proves nothing (has kustomize dropped its Go plugin loader? then the tag can go)")
	}
	seen := map[string]bool{}
	for _, tags := range []string{mk, dk} {
		if seen[tags] {
			continue
		}
		seen[tags] = true
		if slices.Contains(deps(t, root, tags), "plugin") {
			t.Errorf("go list -deps -tags %s ./cmd/deploy-web lists the plugin package", tags)
		}
	}
}

// TestBinaryLinksNoTestPackage: the binary links none of the module's
// test-only packages (a path element ending in "test": platformtest,
// strictyamltest, gitservertest, which runs the git binary). A package
// that starts a process for tests stays out of reach of any data the
// binary reads.
func TestBinaryLinksNoTestPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list on the whole binary")
	}
	const module = "github.com/hanzoai/deploy-web/"
	linked := deps(t, repoRoot(t), Tags)
	if !slices.Contains(linked, module+"cmd/deploy-web") {
		t.Fatalf("go list -deps ./cmd/deploy-web does not list the binary itself: this check proves nothing")
	}
	for _, p := range linked {
		if !strings.HasPrefix(p, module) {
			continue
		}
		for _, elem := range strings.Split(strings.TrimPrefix(p, module), "/") {
			if strings.HasSuffix(elem, "test") {
				t.Errorf("./cmd/deploy-web links %s, a test-only package", p)
			}
		}
	}
}

// TestGoPluginLeftOut: the tag is found among the build settings' tags,
// whole.
func TestGoPluginLeftOut(t *testing.T) {
	tests := []struct {
		settings []debug.BuildSetting
		want     bool
	}{
		{[]debug.BuildSetting{{Key: "-tags", Value: NoGoPlugin}}, true},
		{[]debug.BuildSetting{{Key: "CGO_ENABLED", Value: "0"}, {Key: "-tags", Value: "netgo," + NoGoPlugin}}, true},
		{[]debug.BuildSetting{{Key: "-tags", Value: "netgo"}}, false},
		{[]debug.BuildSetting{{Key: "-tags", Value: "x" + NoGoPlugin}}, false},
		{[]debug.BuildSetting{{Key: "-ldflags", Value: NoGoPlugin}}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := GoPluginLeftOut(&debug.BuildInfo{Settings: tt.settings}); got != tt.want {
			t.Errorf("GoPluginLeftOut(%v) = %v, want %v", tt.settings, got, tt.want)
		}
	}
	if GoPluginLeftOut(nil) {
		t.Error("GoPluginLeftOut(nil) = true, want false")
	}
}

// TestMakefileTagsFindsAMissingFlag: the Makefile check reports a recipe
// without the tags (and not the control plane's builds).
func TestMakefileTagsFindsAMissingFlag(t *testing.T) {
	mk := "GO_TAGS := a,b\nbuild:\n\t$(GO) build -tags $(GO_TAGS) -o x ./cmd/deploy-web\nlint:\n\t$(GO) vet ./...\n\t$(GO) tool staticcheck ./...\nk:\n\tcd tools/kube && $(GO) build -o y k8s.io/x\n"
	tags, bad := makefileTags(t, mk)
	if tags != "a,b" || len(bad) != 2 || !strings.Contains(bad[0], "vet") || !strings.Contains(bad[1], "staticcheck") {
		t.Errorf("makefileTags = %q, %q; want a,b and the vet and staticcheck lines", tags, bad)
	}
}
