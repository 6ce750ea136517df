package writeback

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// MaxHistory bounds Request.History: the commits of the branch a
// write-back fetches, and so the commits a FileRevisions walk may visit.
const MaxHistory = 500

// Revision is one content a file had in a branch's history.
type Revision struct {
	// Commit is the newest commit of the walk whose tree holds Content.
	Commit string
	// Content is the file's content there (at most the walk's maxBytes).
	Content []byte
}

// HistoryWalk is how a FileRevisions walk ended.
type HistoryWalk struct {
	// Commits counts the commits walked.
	Commits int
	// Found says visit accepted a revision (the walk stopped there).
	Found bool
	// Complete says the walk reached the branch's first commit: no older
	// revision exists. When neither Found nor Complete, the walk stopped
	// at its bound (maxCommits, or the depth the write-back fetched).
	Complete bool
	// TooLarge are the commits whose content of the file was over
	// maxBytes: never read, never visited.
	TooLarge []string
}

// FileHistory is a tree that can walk the history of one of its files:
// the tree Commit hands Request.Plan when Request.History is set.
type FileHistory interface {
	// FileRevisions calls visit with each distinct content of the file
	// name in the first-parent history of the tree's commit (the states
	// the branch had), newest first, from the tree's own commit on, until
	// visit returns true or an error, maxCommits commits are walked, or the
	// history (as fetched) ends. A commit where name is missing, or is not
	// a regular file, is passed over; a content over maxBytes is never
	// read (HistoryWalk.TooLarge).
	FileRevisions(name string, maxCommits int, maxBytes int64, visit func(Revision) (bool, error)) (HistoryWalk, error)
}

// FileRevisions implements FileHistory on the fetched branch head.
func (t *treeFS) FileRevisions(name string, maxCommits int, maxBytes int64, visit func(Revision) (bool, error)) (HistoryWalk, error) {
	var w HistoryWalk
	if t.commit == nil {
		return w, errors.New("writeback: history: this tree is not a fetched commit (the edited tree has no history)")
	}
	parts, err := cleanTarget(name)
	if err != nil {
		return w, fmt.Errorf("writeback: history: %v", err)
	}
	if maxCommits <= 0 || maxCommits > MaxHistory {
		maxCommits = MaxHistory
	}
	seen := map[plumbing.Hash]bool{}
	for c := t.commit; ; {
		if w.Commits == maxCommits {
			return w, nil
		}
		w.Commits++
		found, err := t.visitRevision(c, parts, maxBytes, seen, &w, visit)
		if err != nil || found {
			w.Found = found
			return w, err
		}
		if len(c.ParentHashes) == 0 {
			w.Complete = true
			return w, nil
		}
		parent, err := object.GetCommit(t.st, c.ParentHashes[0])
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return w, nil // the fetch's depth: the bound of Request.History
		}
		if err != nil {
			return w, fmt.Errorf("writeback: history: commit %s: %w", c.ParentHashes[0], err)
		}
		c = parent
	}
}

// visitRevision hands visit the file at parts of commit c, unless its
// content was visited before, is missing or is over maxBytes.
func (t *treeFS) visitRevision(c *object.Commit, parts []string, maxBytes int64, seen map[plumbing.Hash]bool, w *HistoryWalk, visit func(Revision) (bool, error)) (bool, error) {
	root, err := c.Tree()
	if err != nil {
		return false, fmt.Errorf("writeback: history: tree of %s: %w", c.Hash, err)
	}
	e, i, err := treeLookup(t.st, root, parts)
	if err != nil {
		return false, fmt.Errorf("writeback: history: %s: %w", c.Hash, err)
	}
	if e == nil || i < len(parts)-1 || (e.Mode != filemode.Regular && e.Mode != filemode.Executable && e.Mode != filemode.Deprecated) || seen[e.Hash] {
		return false, nil
	}
	seen[e.Hash] = true
	o, err := t.st.EncodedObject(plumbing.BlobObject, e.Hash)
	if err != nil {
		return false, fmt.Errorf("writeback: history: %s at %s: %w", e.Name, c.Hash, err)
	}
	if o.Size() > maxBytes {
		w.TooLarge = append(w.TooLarge, c.Hash.String())
		return false, nil
	}
	r, err := o.Reader()
	if err != nil {
		return false, fmt.Errorf("writeback: history: %s at %s: %w", e.Name, c.Hash, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxBytes))
	if err != nil {
		return false, fmt.Errorf("writeback: history: %s at %s: %w", e.Name, c.Hash, err)
	}
	return visit(Revision{Commit: c.Hash.String(), Content: b})
}
