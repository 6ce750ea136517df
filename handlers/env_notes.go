package handlers

import (
	"context"
	"time"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/web/templates"
)

// releaseNotesTimeout bounds reading the release notes of a diff (a
// fetch of the environment's repository, under its own limits too).
const releaseNotesTimeout = 30 * time.Second

// releaseNotes are the commit messages from the from record's commit to
// the to record's, rendered as Markdown safely, for the diff page; nil
// when the diff is not between two records of different commits. A
// failure to read them is said on the page, never the diff's failure.
func (s *Server) releaseNotes(ctx context.Context, env *envconfig.Environment, from, to string) *templates.ReleaseNotesProps {
	if from == "" || to == "" || from == to {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, releaseNotesTimeout)
	defer cancel()
	p := &templates.ReleaseNotesProps{From: from, To: to}
	notes, err := deployplan.ReadReleaseNotes(ctx, env, from, to)
	if err != nil {
		s.log.WarnContext(ctx, "release notes not read", "environment", env.Name, "from", from, "to", to, "err", err)
		p.Error = "the release notes could not be read from the environment's git source: " + publicDiffError(err)
		return p
	}
	p.Incomplete = notes.Incomplete
	for _, c := range notes.Commits {
		html, cut, err := s.markdown.Render(c.Message)
		if err != nil {
			p.Error = "a commit message could not be rendered"
			return p
		}
		p.Commits = append(p.Commits, templates.ReleaseNoteProps{Hash: c.Hash, Author: c.Author, Time: c.Time, HTML: html, Cut: c.Cut || cut})
	}
	return p
}
