package audit

import (
	"context"
)

// Lister lists records (implemented by *Store).
type Lister interface {
	List(ctx context.Context, f Filter) (Page, error)
}

// liveSearchPages bounds LastApplied's search: at most this many pages of
// MaxLimit records (older successful applies are past retention's default
// anyway).
const liveSearchPages = 4

// LastApplied is the one answer to "which commit is live in environment
// env?": the newest apply record of env that succeeded and names a
// commit, whoever made it (the console, auto-sync's runs, the command
// line's apply --apply writing to the same namespace). ok is false when
// there is none.
func LastApplied(ctx context.Context, l Lister, env string) (rec Record, ok bool, err error) {
	f := Filter{Environment: env, Verb: VerbApply, Outcome: OutcomeSucceeded, Limit: MaxLimit}
	for range liveSearchPages {
		page, err := l.List(ctx, f)
		if err != nil {
			return Record{}, false, err
		}
		for _, r := range page.Records {
			if r.Commit != "" {
				return r, true, nil
			}
		}
		if page.Continue == "" {
			break
		}
		f.Continue = page.Continue
	}
	return Record{}, false, nil
}
