package deployplan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Reports and captures kept per environment: the newest ReportsKeep, none
// older than ReportsMaxAge, and always the newest capture (the one the
// latest apply's report names for a restore).
const (
	ReportsKeep   = 50
	ReportsMaxAge = 30 * 24 * time.Hour
)

// DefaultReportsDir is the console's reports folder when --reports-dir is
// not given: deploy-web/reports in the user's cache folder
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache), else
// deploy-web-<uid>/reports in the temporary folder; never a path shared
// by every user of the machine. PrepareReportsDir creates it private.
func DefaultReportsDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "deploy-web", "reports")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("deploy-web-%d", os.Getuid()), "reports")
}

// PrepareReportsDir creates dir (its missing folders 0700) and refuses it
// unless it is a real folder (not a symbolic link), owned by this user
// and not writable by others: reports and captures hold the live state of
// the objects an apply touched, and a folder another user controls could
// swap them (a restore reads a capture back) or read them.
func PrepareReportsDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("deployplan: reports folder %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("deployplan: reports folder %s: %w", dir, err)
	}
	return checkReportsDir(dir, fi, os.Getuid())
}

// checkReportsDir is PrepareReportsDir's rule over the folder's Lstat.
func checkReportsDir(dir string, fi fs.FileInfo, uid int) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("deployplan: reports folder %s is a symbolic link: give the folder itself (--reports-dir, --write-report)", dir)
	case !fi.IsDir():
		return fmt.Errorf("deployplan: reports folder %s is not a folder", dir)
	case fi.Mode().Perm()&0o002 != 0:
		return fmt.Errorf("deployplan: reports folder %s is writable by every user (mode %04o): use a folder of your own, or chmod o-w it", dir, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
		return fmt.Errorf("deployplan: reports folder %s belongs to uid %d, not to this user (uid %d): use a folder of your own", dir, st.Uid, uid)
	}
	return nil
}

// PruneReports removes from dir, one environment's folder of reports, the
// entries isOurs accepts (run folders, captures) beyond the newest
// ReportsKeep or older than ReportsMaxAge, newest by modification time.
// The newest entry that is or holds a capture (a pre-apply-<time> folder)
// is never removed: it is what the latest apply offers to restore.
// Anything else in dir is left alone. It returns the names it removed.
func PruneReports(dir string, isOurs func(name string) bool, now time.Time) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deployplan: prune reports in %s: %w", dir, err)
	}
	type entry struct {
		name    string
		mod     time.Time
		capture bool
	}
	var es []entry
	for _, e := range ents {
		if !e.IsDir() || !isOurs(e.Name()) {
			continue // a symbolic link's IsDir is false: never followed
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		es = append(es, entry{name: e.Name(), mod: fi.ModTime(), capture: holdsCapture(filepath.Join(dir, e.Name()))})
	}
	slices.SortFunc(es, func(a, b entry) int { return b.mod.Compare(a.mod) })
	protected := slices.IndexFunc(es, func(e entry) bool { return e.capture })
	var removed []string
	var errs []error
	for i, e := range es {
		if i == protected || (i < ReportsKeep && now.Sub(e.mod) <= ReportsMaxAge) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.name)); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.name)
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("deployplan: prune reports in %s: %w", dir, err)
	}
	return removed, nil
}

// IsCapture reports whether dir is a pre-apply capture an apply wrote: a
// pre-apply-<time> folder with its index.
func IsCapture(dir string) bool {
	if !strings.HasPrefix(filepath.Base(dir), capturePrefix) {
		return false
	}
	fi, err := os.Lstat(filepath.Join(dir, CaptureIndexFile))
	return err == nil && fi.Mode().IsRegular()
}

// holdsCapture reports whether dir is a capture or a run folder holding
// one.
func holdsCapture(dir string) bool {
	if IsCapture(dir) {
		return true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.IsDir() && IsCapture(filepath.Join(dir, e.Name())) {
			return true
		}
	}
	return false
}
