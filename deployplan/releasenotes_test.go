package deployplan

import (
	"context"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
)

// notesRepo is a local repository with one empty commit per message.
func notesRepo(t *testing.T, msgs ...string) (string, []string) {
	t.Helper()
	return gitservertest.LocalCommits(t, "Dev <script>", msgs...)
}

func TestReadReleaseNotes(t *testing.T) {
	many := make([]string, MaxNotesCommits+5)
	for i := range many {
		many[i] = "change " + strings.Repeat("x", i%3)
	}
	manyDir, manyHashes := notesRepo(t, many...)
	dir, h := notesRepo(t, "one", "two: <script>alert(1)</script>", "three\n\n[x](javascript:alert(1))", strings.Repeat("é", MaxNotesMessageBytes))
	_, other := notesRepo(t, "elsewhere")
	tests := []struct {
		name       string
		dir        string
		from, to   string
		messages   int
		incomplete string
		err        string
	}{
		{"between two records", dir, h[0], h[2], 2, "", ""},
		{"the same commit", dir, h[1], h[1], 0, "", ""},
		{"a long message is cut", dir, h[2], h[3], 1, "", ""},
		{"more commits than the bound", manyDir, manyHashes[0], manyHashes[len(manyHashes)-1], MaxNotesCommits, "more than", ""},
		{"from is not an ancestor", dir, other[0], h[1], 2, "not an ancestor", ""},
		{"not a hash", dir, "main", h[1], 0, "", "not both full commit hashes"},
		{"an option as a hash", dir, "--upload-pack=x", h[1], 0, "", "not both full commit hashes"},
		{"unknown commit", dir, h[0], strings.Repeat("a", 40), 0, "", "commit aaaaaaaaaaaa"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &envconfig.Environment{Name: "dev", Source: envconfig.Source{Repo: tt.dir, Ref: "master"}}
			got, err := ReadReleaseNotes(context.Background(), env, tt.from, tt.to)
			if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("ReadReleaseNotes = %v, want an error containing %q", err, tt.err)
			}
			if len(got.Commits) != tt.messages || !strings.Contains(got.Incomplete, tt.incomplete) || (tt.incomplete == "") != (got.Incomplete == "") {
				t.Errorf("ReadReleaseNotes = %d commits, incomplete %q; want %d, %q", len(got.Commits), got.Incomplete, tt.messages, tt.incomplete)
			}
			for _, c := range got.Commits {
				if len(c.Message) > MaxNotesMessageBytes || c.Hash == tt.from {
					t.Errorf("commit %s: %d bytes of message (cut %v); want at most %d, and never the from commit", c.Hash, len(c.Message), c.Cut, MaxNotesMessageBytes)
				}
			}
		})
	}
	// Newest first, the messages as written (rendering is the page's).
	got, _ := ReadReleaseNotes(context.Background(), &envconfig.Environment{Name: "dev", Source: envconfig.Source{Repo: dir}}, h[0], h[2])
	if len(got.Commits) != 2 || got.Commits[0].Hash != h[2] || !strings.HasPrefix(got.Commits[0].Message, "three") || got.Commits[1].Message != "two: <script>alert(1)</script>" {
		t.Errorf("ReadReleaseNotes(one..three) = %+v, want three then two", got.Commits)
	}
	if cut, _ := ReadReleaseNotes(context.Background(), &envconfig.Environment{Name: "dev", Source: envconfig.Source{Repo: dir}}, h[2], h[3]); len(cut.Commits) != 1 || !cut.Commits[0].Cut {
		t.Errorf("ReadReleaseNotes of a %d-byte message = %+v, want it cut", 2*MaxNotesMessageBytes, cut.Commits)
	}
}

// TestReadReleaseNotesRemote: a remote source is fetched at the newer
// commit with enough history for the notes (a shallow fetch, not one
// commit), under the environment's limits.
func TestReadReleaseNotesRemote(t *testing.T) {
	srv := gitservertest.New(t, map[string]string{"k/kustomization.yaml": "resources: []\n"}, gitservertest.Options{})
	from := srv.Head("main")
	srv.RemoteCommitFiles(map[string]string{"k/a.yaml": "a: 1\n"}, "add a\n\nSee https://ci.example/1")
	to := srv.RemoteCommitFiles(map[string]string{"k/b.yaml": "b: 1\n"}, "add b")
	env := &envconfig.Environment{Name: "dev", Source: envconfig.Source{Repo: srv.URL, Ref: "main", Path: "k"}}
	got, err := ReadReleaseNotes(context.Background(), env, from, to)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, c := range got.Commits {
		msgs = append(msgs, strings.SplitN(c.Message, "\n", 2)[0])
	}
	if strings.Join(msgs, ",") != "add b,add a" || got.Incomplete != "" {
		t.Errorf("ReadReleaseNotes(remote) = %v, incomplete %q; want [add b add a], complete", msgs, got.Incomplete)
	}
}
