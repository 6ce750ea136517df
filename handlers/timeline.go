package handlers

import (
	"context"
	"time"

	"github.com/hanzoai/deploy-web/timeline"
)

// Timeline reads the timeline (implemented by *timeline.Store): an App's
// entries, the fleet's page by page, the live ones, and since when an
// App's record is unbroken (the promotion's soak).
type Timeline interface {
	Query(ctx context.Context, app timeline.App, since, until time.Time) ([]timeline.Entry, error)
	Coverage(app timeline.App) time.Time
	Fleet(ctx context.Context, f timeline.Filter) (timeline.FleetPage, error)
	Subscribe(buffer int) (*timeline.Subscription, error)
}
