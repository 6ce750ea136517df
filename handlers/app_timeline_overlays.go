package handlers

import (
	"context"
	"time"

	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/timeline/overlays"
)

// timelineSpans are the freezes and pauses that cover App a over [since,
// until), oldest first, and whether some were left out (worked out by
// package timeline/overlays).
func (s *Server) timelineSpans(ctx context.Context, a appRef, since, until time.Time) ([]timeline.Overlay, bool) {
	rd := overlays.Reader{Freezes: s.opts.Freezes, Records: s.opts.Audit, ReadWait: timelineReadWait, Log: s.log}
	return rd.Of(ctx, s.freezeTarget(s.appTarget(a)), s.appEnvironments(a.Cluster(), a.Namespace), since, until)
}
