package gitops

import (
	"context"
	"errors"

	"github.com/hanzoai/deploy-web/promotion"
)

// Soaking is, for environment target, every App its source (promotion.after)
// runs at another version than target whose promotion waits for its soak:
// the soak gate of the promotion dialog (the same evaluation, ask, without
// the promotion checks) failed with a promotable time. None when target is
// not promoted into, or the caller of ctx may not view its source.
func (s *Service) Soaking(ctx context.Context, target string) ([]promotion.Soaking, error) {
	er, err := s.runner()
	if err != nil {
		return nil, nil
	}
	e, err := er.Config().Env(target)
	if err != nil || e.PromotedFrom() == "" || s.opts.View == nil {
		return nil, nil
	}
	ask, err := s.ask(ctx, target, "", "", promoter{soakOnly: true})
	var ge *Error
	if errors.As(err, &ge) && ge.Kind == KindNotFound {
		return nil, nil // no App in the source, or a source the caller may not view
	}
	if err != nil {
		return nil, err
	}
	var out []promotion.Soaking
	for _, a := range ask.Apps {
		if !a.Source.Present || a.Target.Present && a.Target.Version == a.Source.Version {
			continue
		}
		for _, g := range a.Gates {
			if g.ID == promotion.GateSoak && g.State == promotion.Failed && !g.PromotableAt.IsZero() {
				out = append(out, promotion.Soaking{App: a.Name, Version: a.Source.Version, Source: ask.Source.Name, Target: ask.Target.Name,
					At: g.PromotableAt, Message: g.Message})
			}
		}
	}
	return out, nil
}
