package handlers

import (
	"context"
	"time"

	"github.com/hanzoai/deploy-web/timeline"
)

// Timeline reads the timeline (implemented by *timeline.Store): an App's
// entries, the fleet's page by page, and the live ones.
type Timeline interface {
	Query(ctx context.Context, app timeline.App, since, until time.Time) ([]timeline.Entry, error)
	Fleet(ctx context.Context, f timeline.Filter) (timeline.FleetPage, error)
	Subscribe(buffer int) (*timeline.Subscription, error)
}
