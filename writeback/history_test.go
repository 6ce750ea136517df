package writeback

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/internal/actor"
)

// errStop ends a Commit in its Plan hook, with nothing pushed.
var errStop = errors.New("stop: the test has what it walked")

// walkOutcome is what one FileRevisions walk inside a Commit's Plan saw.
type walkOutcome struct {
	walk    HistoryWalk
	visited []string // contents, in visit order
	commits []string // the revisions' commits
	err     error
}

// walkHistory fetches main with history commits (0: the default depth)
// and walks file's history in Plan, accepting the revision whose content is
// want ("" accepts none). Nothing is pushed.
func walkHistory(t *testing.T, url string, history int, file, want string, maxCommits int, maxBytes int64) walkOutcome {
	t.Helper()
	var out walkOutcome
	req := request(url, "1.2.0")
	req.Edits, req.History = nil, history
	req.Plan = func(tree fs.FS) ([]Edit, error) {
		h, ok := tree.(FileHistory)
		if !ok {
			t.Fatalf("Plan's tree %T is not a FileHistory", tree)
		}
		out.walk, out.err = h.FileRevisions(file, maxCommits, maxBytes, func(r Revision) (bool, error) {
			out.visited = append(out.visited, string(r.Content))
			out.commits = append(out.commits, r.Commit)
			return want != "" && string(r.Content) == want, nil
		})
		return nil, errStop
	}
	if _, err := Commit(context.Background(), req); err == nil || !strings.Contains(err.Error(), errStop.Error()) {
		t.Fatalf("Commit = %v, want the Plan hook's stop", err)
	}
	return out
}

func TestFileRevisions(t *testing.T) {
	s := newGitServer(t, map[string]string{"catalog.json": "v1\n", "other.txt": "x\n"}, serverOptions{})
	s.remoteCommit("catalog.json", "v2\n")
	s.remoteCommit("other.txt", "y\n") // the catalog unchanged: not visited again
	s.remoteCommit("catalog.json", "v1\n")
	v3 := s.remoteCommit("catalog.json", "v3\n")
	before := s.pushCount()

	tests := []struct {
		name         string
		history      int
		want         string
		maxCommits   int
		maxBytes     int64
		visited      []string
		found        bool
		complete     bool
		commits      int
		firstCommits []string // the commits of the first revisions visited
	}{
		{name: "found", history: MaxHistory, want: "v2\n", maxCommits: 100, maxBytes: 1 << 10,
			visited: []string{"v3\n", "v1\n", "v2\n"}, found: true, commits: 3, firstCommits: []string{v3}},
		{name: "not found: the whole history", history: MaxHistory, want: "v9\n", maxCommits: 100, maxBytes: 1 << 10,
			visited: []string{"v3\n", "v1\n", "v2\n"}, complete: true, commits: 5},
		{name: "the walk's bound", history: MaxHistory, want: "v2\n", maxCommits: 2, maxBytes: 1 << 10,
			visited: []string{"v3\n", "v1\n"}, commits: 2},
		{name: "the fetch's depth", history: 2, want: "v2\n", maxCommits: 100, maxBytes: 1 << 10,
			visited: []string{"v3\n", "v1\n"}, commits: 2},
		{name: "the head alone without History", history: 0, want: "v2\n", maxCommits: 100, maxBytes: 1 << 10,
			visited: []string{"v3\n"}, commits: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := walkHistory(t, s.url, tt.history, "catalog.json", tt.want, tt.maxCommits, tt.maxBytes)
			if got.err != nil {
				t.Fatalf("FileRevisions: %v", got.err)
			}
			if strings.Join(got.visited, "|") != strings.Join(tt.visited, "|") {
				t.Errorf("FileRevisions visited %q, want %q", got.visited, tt.visited)
			}
			if got.walk.Found != tt.found || got.walk.Complete != tt.complete || got.walk.Commits != tt.commits {
				t.Errorf("FileRevisions = %+v, want found %v, complete %v after %d commits", got.walk, tt.found, tt.complete, tt.commits)
			}
			for i, c := range tt.firstCommits {
				if got.commits[i] != c {
					t.Errorf("revision %d is of commit %s, want %s", i, got.commits[i], c)
				}
			}
		})
	}
	// A file:// repository (go-git's in-process server) walks the same.
	got := walkHistory(t, "file://"+s.bare, MaxHistory, "catalog.json", "v2\n", 100, 1<<10)
	if got.err != nil || !got.walk.Found || strings.Join(got.visited, "|") != "v3\n|v1\n|v2\n" {
		t.Errorf("FileRevisions over file:// = %+v, visited %q, %v; want v3, v1, v2 found", got.walk, got.visited, got.err)
	}
	if s.pushCount() != before || s.head("main") != v3 {
		t.Errorf("the walks pushed (%d pushes, main %s); want nothing", s.pushCount()-before, s.head("main"))
	}
}

// TestFileRevisionsHostile: a revision over the byte cap is never read or
// visited (it is named in TooLarge) and the walk goes on to older ones; a
// path that leaves the repository is refused.
func TestFileRevisionsHostile(t *testing.T) {
	s := newGitServer(t, map[string]string{"catalog.json": "old\n"}, serverOptions{})
	huge := s.remoteCommit("catalog.json", strings.Repeat("{", 64<<10))
	s.remoteCommit("catalog.json", "new\n")

	got := walkHistory(t, s.url, MaxHistory, "catalog.json", "old\n", 100, 1<<10)
	if got.err != nil || !got.walk.Found || strings.Join(got.visited, "|") != "new\n|old\n" {
		t.Errorf("FileRevisions past a huge revision = %+v, visited %q, %v; want new then old, found", got.walk, got.visited, got.err)
	}
	if len(got.walk.TooLarge) != 1 || got.walk.TooLarge[0] != huge {
		t.Errorf("TooLarge = %v, want [%s]", got.walk.TooLarge, huge)
	}

	for _, bad := range []string{"../catalog.json", "/catalog.json", ".git/config"} {
		got := walkHistory(t, s.url, MaxHistory, bad, "", 100, 1<<10)
		if got.err == nil || len(got.visited) != 0 {
			t.Errorf("FileRevisions(%q) = %v, visited %q; want refused", bad, got.err, got.visited)
		}
	}
}

func TestHistoryRequestBound(t *testing.T) {
	for _, n := range []int{-1, MaxHistory + 1} {
		req := request("file:///nonexistent.git", "1.2.0")
		req.History = n
		if _, err := Commit(context.Background(), req); err == nil || !strings.Contains(err.Error(), "writeback: history:") {
			t.Errorf("Commit(History %d) = %v, want refused", n, err)
		}
	}
}

func TestWithDetail(t *testing.T) {
	msg := Message("rollback", "apps/api", "abc1234", "def5678", actor.Actor{Email: "a@example.com", Subject: "u-1"}, "")
	got := withDetail(msg, []string{"Moves with it:", "", "- apps/worker\nInjected: yes", strings.Repeat("x", 500)})
	want := msg + "\nMoves with it:\n- apps/worker Injected: yes\n" + strings.Repeat("x", maxFieldRunes) + "\n"
	if got != want {
		t.Errorf("withDetail = %q, want %q", got, want)
	}
	if got := withDetail(msg, nil); got != msg {
		t.Errorf("withDetail(no lines) = %q, want the message alone", got)
	}
	many := make([]string, maxDetailLines+10)
	for i := range many {
		many[i] = "- app"
	}
	if got := withDetail(msg, many); strings.Count(got, "- app\n") != maxDetailLines || !strings.HasSuffix(got, "[…]\n") {
		t.Errorf("withDetail(%d lines) kept %d, want %d and a mark", len(many), strings.Count(got, "- app\n"), maxDetailLines)
	}
}
