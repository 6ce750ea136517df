package why

import (
	"context"
	"fmt"

	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/web/paths"
)

// Soaks are the Apps of a target environment whose newer version in its
// source waits for its soak (implemented by *gitops.Service: the soak
// gate of the promotion dialog).
type Soaks interface {
	Soaking(ctx context.Context, target string) ([]promotion.Soaking, error)
}

// soakReasons: the version of the App in the source of its environment
// that waits for its soak, with the time it becomes promotable.
func (s *Service) soakReasons(ctx context.Context, app App, fail func(string)) []Reason {
	if s.o.Soaks == nil || app.Env == "" {
		return nil
	}
	soaking, err := s.o.Soaks.Soaking(ctx, app.Env)
	if err != nil {
		fail("the soak of " + app.Env + "'s source")
		return nil
	}
	var out []Reason
	for _, sk := range soaking {
		if sk.App != app.Name {
			continue
		}
		out = append(out, Reason{Kind: Promotion, Message: fmt.Sprintf("%s in %s waits for its soak before it may be promoted to %s: %s", sk.Version, sk.Source, sk.Target, sk.Message),
			Until: at(sk.At), Link: paths.EnvPromote(sk.Target, sk.Source, app.Name)})
	}
	return out
}
