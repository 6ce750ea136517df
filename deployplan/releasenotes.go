package deployplan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hanzoai/deploy-web/envconfig"
)

// Bounds of the release notes between two commits.
const (
	// MaxNotesCommits is how many commits the notes list at most.
	MaxNotesCommits = 50
	// MaxNotesMessageBytes bounds one commit's message.
	MaxNotesMessageBytes = 8 << 10
	// MaxNotesBytes bounds the messages in all.
	MaxNotesBytes = 64 << 10
)

// NoteCommit is one commit of release notes.
type NoteCommit struct {
	Hash    string    `json:"hash"`
	Author  string    `json:"author"`
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
	// Cut: the message was longer than MaxNotesMessageBytes.
	Cut bool `json:"cut,omitempty"`
}

// ReleaseNotes are the commits after From up to To, newest first,
// following first parents.
type ReleaseNotes struct {
	From, To string
	Commits  []NoteCommit
	// Incomplete says why the list stops before From: more than
	// MaxNotesCommits commits or MaxNotesBytes of messages, history not
	// fetched, or From not an ancestor of To along first parents.
	Incomplete string
}

// ReadReleaseNotes reads the commit messages between from and to (full
// commit hashes, as records carry them) from env's git source: a local
// repository in place, or a remote one fetched at to, MaxNotesCommits+1
// commits deep, under env's limits (the fetch's time, bytes and disk, as a
// plan's). Nothing is rendered or run.
func ReadReleaseNotes(ctx context.Context, env *envconfig.Environment, from, to string) (ReleaseNotes, error) {
	notes := ReleaseNotes{From: from, To: to}
	if !fullHashRE.MatchString(from) || !fullHashRE.MatchString(to) {
		return notes, fmt.Errorf("deployplan: release notes: %q and %q are not both full commit hashes", truncateRef(from), truncateRef(to))
	}
	if env.Source.Repo == "" {
		return notes, errors.New("deployplan: release notes: environment " + env.Name + " has no git source")
	}
	var repo *git.Repository
	if local, ok := localRepoPath(env.Source.Repo); ok {
		r, err := git.PlainOpen(local)
		if err != nil {
			return notes, fmt.Errorf("deployplan: release notes: open repository %s: %w", local, err)
		}
		repo = r
	} else {
		src := env.Source
		src.Ref = to
		r, cleanup, err := fetchRemoteDepth(ctx, src, env.Limits, MaxNotesCommits+1)
		if err != nil {
			return notes, err
		}
		defer cleanup()
		repo = r
	}
	return walkNotes(ctx, repo, notes)
}

// walkNotes follows first parents from notes.To until notes.From, within
// the bounds.
func walkNotes(ctx context.Context, repo *git.Repository, notes ReleaseNotes) (ReleaseNotes, error) {
	c, err := repo.CommitObject(plumbing.NewHash(notes.To))
	if err != nil {
		return notes, fmt.Errorf("deployplan: release notes: commit %s: %w", notes.To[:12], err)
	}
	total := 0
	for {
		if c.Hash.String() == notes.From {
			return notes, nil
		}
		if err := ctx.Err(); err != nil {
			return notes, fmt.Errorf("deployplan: release notes: %w", err)
		}
		if len(notes.Commits) == MaxNotesCommits {
			notes.Incomplete = fmt.Sprintf("more than %d commits", MaxNotesCommits)
			return notes, nil
		}
		nc := noteOf(c)
		if total+len(nc.Message) > MaxNotesBytes {
			notes.Incomplete = fmt.Sprintf("more than %d bytes of messages", MaxNotesBytes)
			return notes, nil
		}
		total += len(nc.Message)
		notes.Commits = append(notes.Commits, nc)
		if c.NumParents() == 0 {
			notes.Incomplete = "commit " + notes.From[:12] + " is not an ancestor along first parents"
			return notes, nil
		}
		if c, err = c.Parent(0); err != nil {
			// A shallow fetch ends here, or the object is missing.
			notes.Incomplete = "the history before commit " + notes.Commits[len(notes.Commits)-1].Hash[:12] + " was not fetched"
			return notes, nil
		}
	}
}

// noteOf is c as a note: its message bounded and valid UTF-8, its author
// by name.
func noteOf(c *object.Commit) NoteCommit {
	msg := strings.ToValidUTF8(strings.TrimSpace(c.Message), "\uFFFD")
	nc := NoteCommit{Hash: c.Hash.String(), Author: c.Author.Name, Time: c.Author.When.UTC()}
	if len(msg) > MaxNotesMessageBytes {
		msg, nc.Cut = msg[:MaxNotesMessageBytes], true
		for !utf8.ValidString(msg) {
			msg = msg[:len(msg)-1]
		}
	}
	if len(nc.Author) > 200 {
		nc.Author = strings.ToValidUTF8(nc.Author[:200], "")
	}
	nc.Message = msg
	return nc
}
