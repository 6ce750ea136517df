package deployplan

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPrepareReportsDir: a reports folder is created private, and one
// writable by every user, a symbolic link or a file is refused, by
// PrepareReportsDir and by the report's own WriteFile.
func TestPrepareReportsDir(t *testing.T) {
	root := t.TempDir()
	fresh := filepath.Join(root, "a", "b", "reports")
	if err := PrepareReportsDir(fresh); err != nil {
		t.Fatalf("PrepareReportsDir(new folder) = %v", err)
	}
	for _, d := range []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), fresh} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v (%v), want 0700", d, fi.Mode().Perm(), err)
		}
	}

	shared := filepath.Join(root, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil { // as /tmp is
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(fresh, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dir, want string }{
		{shared, "writable by every user"},
		{link, "symbolic link"},
		{file, "not a directory"},
	} {
		if err := PrepareReportsDir(tt.dir); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.dir) {
			t.Errorf("PrepareReportsDir(%s) = %v, want an error naming it, %q", tt.dir, err, tt.want)
		}
		r := &Report{}
		if err := r.WriteFile(filepath.Join(tt.dir, "deploy-report.json")); err == nil {
			t.Errorf("WriteFile into %s = nil, want refused", tt.dir)
		}
	}
	if _, err := os.Stat(filepath.Join(shared, "deploy-report.json")); err == nil {
		t.Errorf("a report was written into the shared folder")
	}
}

// fakeDirInfo is the Lstat of a folder owned by uid with perm.
type fakeDirInfo struct {
	uid  uint32
	perm fs.FileMode
}

func (f fakeDirInfo) Name() string       { return "reports" }
func (f fakeDirInfo) Size() int64        { return 0 }
func (f fakeDirInfo) Mode() fs.FileMode  { return fs.ModeDir | f.perm }
func (f fakeDirInfo) ModTime() time.Time { return time.Time{} }
func (f fakeDirInfo) IsDir() bool        { return true }
func (f fakeDirInfo) Sys() any           { return &syscall.Stat_t{Uid: f.uid} }

// TestCheckReportsDirOwner: a folder of another user is refused, even
// private to that user.
func TestCheckReportsDirOwner(t *testing.T) {
	for _, tt := range []struct {
		info fakeDirInfo
		want string // "" for accepted
	}{
		{fakeDirInfo{uid: 1000, perm: 0o700}, ""},
		{fakeDirInfo{uid: 1000, perm: 0o755}, ""},
		{fakeDirInfo{uid: 1001, perm: 0o700}, "belongs to uid 1001, not to this user (uid 1000)"},
		{fakeDirInfo{uid: 0, perm: 0o755}, "belongs to uid 0"},
		{fakeDirInfo{uid: 1000, perm: 0o777}, "writable by every user (mode 0777)"},
	} {
		err := checkReportsDir("/x/reports", tt.info, 1000)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("checkReportsDir(uid %d, %04o) = %v, want %q", tt.info.uid, tt.info.perm, err, tt.want)
		}
	}
}

// TestDefaultReportsDir: the console's default folder is the user's own,
// never the temporary folder's deploy-web-reports every user shares.
func TestDefaultReportsDir(t *testing.T) {
	shared := filepath.Join(os.TempDir(), "deploy-web-reports")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	if got, want := DefaultReportsDir(), filepath.Join(cache, "deploy-web", "reports"); got != want {
		t.Errorf("DefaultReportsDir() with $XDG_CACHE_HOME = %s, want %s", got, want)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	got := DefaultReportsDir()
	if want := filepath.Join(os.TempDir(), fmt.Sprintf("deploy-web-%d", os.Getuid()), "reports"); got != want {
		t.Errorf("DefaultReportsDir() without a home = %s, want %s", got, want)
	}
	if got == shared || strings.HasPrefix(shared, got) {
		t.Errorf("DefaultReportsDir() = %s, the shared folder", got)
	}
}

// TestPruneReports: an environment keeps its newest ReportsKeep entries,
// none older than ReportsMaxAge, and always its newest capture; what is
// not a report entry of deploy-web's is never touched.
func TestPruneReports(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	mk := func(t *testing.T, dir string, age time.Duration, capture bool) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if capture {
			if err := os.WriteFile(filepath.Join(dir, CaptureIndexFile), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		mt := now.Add(-age)
		if err := os.Chtimes(dir, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	day := 24 * time.Hour

	t.Run("captures beside the CLI's report", func(t *testing.T) {
		dir := t.TempDir()
		var want []string
		for i := range 60 { // one an hour, newest first
			name := fmt.Sprintf("%s%03d", capturePrefix, i)
			mk(t, filepath.Join(dir, name), time.Duration(i)*time.Hour, true)
			if i < ReportsKeep {
				want = append(want, name)
			}
		}
		// Not ours: a folder named like a capture without its index, a
		// user's folder, a file, and a symbolic link to a capture.
		mk(t, filepath.Join(dir, capturePrefix+"by-hand"), 90*day, false)
		mk(t, filepath.Join(dir, "notes"), 90*day, false)
		os.WriteFile(filepath.Join(dir, "deploy-report.json"), nil, 0o600)
		os.Symlink(filepath.Join(dir, capturePrefix+"059"), filepath.Join(dir, capturePrefix+"link"))
		want = append(want, capturePrefix+"by-hand", capturePrefix+"link", "deploy-report.json", "notes")

		isCapture := func(name string) bool { return IsCapture(filepath.Join(dir, name)) }
		removed, err := PruneReports(dir, isCapture, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(removed) != 10 {
			t.Errorf("PruneReports removed %d, want 10: %v", len(removed), removed)
		}
		if got := dirNames(t, dir); !slices.Equal(got, sorted(want)) {
			t.Errorf("left %v, want %v", got, sorted(want))
		}
	})

	t.Run("console runs: the latest capture stays whatever its age and rank", func(t *testing.T) {
		dir := t.TempDir()
		// The last apply (with its capture) 40 days ago, then 55 plans.
		mk(t, filepath.Join(dir, "dev-apply-old"), 45*day, false)
		mk(t, filepath.Join(dir, "dev-apply-old", capturePrefix+"x"), 45*day, true)
		mk(t, filepath.Join(dir, "dev-apply-old"), 45*day, false) // its mtime, after the capture's
		mk(t, filepath.Join(dir, "dev-apply-last"), 40*day, false)
		mk(t, filepath.Join(dir, "dev-apply-last", capturePrefix+"y"), 40*day, true)
		mk(t, filepath.Join(dir, "dev-apply-last"), 40*day, false) // its mtime, after the capture's
		want := []string{"dev-apply-last", "other"}
		for i := range 55 {
			name := fmt.Sprintf("dev-plan-%02d", i)
			mk(t, filepath.Join(dir, name), time.Duration(i)*time.Hour, false)
			if i < ReportsKeep {
				want = append(want, name)
			}
		}
		mk(t, filepath.Join(dir, "other"), 90*day, false)
		isRun := func(name string) bool { return strings.HasPrefix(name, "dev-") }
		if _, err := PruneReports(dir, isRun, now); err != nil {
			t.Fatal(err)
		}
		if got := dirNames(t, dir); !slices.Equal(got, sorted(want)) {
			t.Errorf("left %v, want %v", got, sorted(want))
		}
		if !IsCapture(filepath.Join(dir, "dev-apply-last", capturePrefix+"y")) {
			t.Errorf("the latest apply's capture is gone")
		}
	})

	t.Run("old entries go even among the newest", func(t *testing.T) {
		dir := t.TempDir()
		mk(t, filepath.Join(dir, "dev-a"), time.Hour, false)
		mk(t, filepath.Join(dir, "dev-b"), 31*day, false)
		mk(t, filepath.Join(dir, "dev-c"), 29*day, false)
		if _, err := PruneReports(dir, func(n string) bool { return strings.HasPrefix(n, "dev-") }, now); err != nil {
			t.Fatal(err)
		}
		if got, want := dirNames(t, dir), []string{"dev-a", "dev-c"}; !slices.Equal(got, want) {
			t.Errorf("left %v, want %v", got, want)
		}
	})

	t.Run("missing folder", func(t *testing.T) {
		if removed, err := PruneReports(filepath.Join(t.TempDir(), "none"), func(string) bool { return true }, now); err != nil || len(removed) != 0 {
			t.Errorf("PruneReports(missing) = %v, %v; want nothing, nil", removed, err)
		}
	})
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
