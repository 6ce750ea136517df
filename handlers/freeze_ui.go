package handlers

import (
	"context"
	"time"

	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/templates"
)

// The freezes as pages show them: a banner on the pages of a frozen
// target (and a notice a day ahead), the break-glass field of its confirm
// dialogs, the chip and filter of the fleet. Pages read the gate's
// snapshot (at most freeze.SnapshotTTL old); the writes themselves are
// decided afresh (freeze_gate.go).

// upcomingNotice is how far ahead pages announce a freeze.
const upcomingNotice = freeze.DefaultUpcoming

// freezeBanner is the freeze state of target t for a page's banner.
func (s *Server) freezeBanner(ctx context.Context, t roles.Target) templates.FreezeBannerProps {
	var p templates.FreezeBannerProps
	if s.opts.Freezes == nil {
		return p
	}
	l, now, err := s.opts.Freezes.Snapshot(ctx)
	if err != nil {
		p.Unreadable = true
		if te, ok := cmstore.IsTampered(err); ok {
			p.Tampered = te.Public()
		}
		return p
	}
	ft := s.freezeTarget(t)
	if f, opens, ok := l.Active(now, ft); ok {
		w, _ := f.WindowAt(now)
		row := freezeRow(f, w, opens)
		p.Active = &row
	}
	for _, u := range l.Upcoming(now, upcomingNotice) {
		if u.Freeze.Touches(ft) {
			p.Upcoming = append(p.Upcoming, freezeRow(&u.Freeze, u.Window, u.Window.Start))
		}
	}
	return p
}

// breakGlassState is what the write buttons at t show of the freezes:
// frozen now (with the refusal's words) and whether the person may break
// the glass there (roles.BreakGlass, the decision the write takes).
func (s *Server) breakGlassState(ctx context.Context, t roles.Target) templates.BreakGlassProps {
	if s.opts.Freezes == nil {
		return templates.BreakGlassProps{}
	}
	l, now, err := s.opts.Freezes.Snapshot(ctx)
	p := templates.BreakGlassProps{Allowed: s.allowed(ctx, roles.BreakGlass, t)}
	switch err {
	case nil:
		if f, opens, ok := l.Active(now, s.freezeTarget(t)); ok {
			p.Frozen, p.Message = true, (&freeze.FrozenError{Freeze: *f, OpensAt: opens}).Message()
		}
	default:
		// Writes are refused (fail closed): the buttons say so.
		p.Frozen, p.Message = true, "the deploy freezes could not be read, so writes are refused until they can"
		p.Allowed = false
	}
	return p
}

// frozenFleet is the freezes as the fleet list reads them: one snapshot
// for every row of a request.
type frozenFleet struct {
	s    *Server
	list freeze.List
	now  time.Time
	ok   bool
}

// frozenRows reads the snapshot for one fleet request.
func (s *Server) frozenRows(ctx context.Context) frozenFleet {
	if s.opts.Freezes == nil {
		return frozenFleet{s: s}
	}
	l, now, err := s.opts.Freezes.Snapshot(ctx)
	return frozenFleet{s: s, list: l, now: now, ok: err == nil}
}

// active is the freeze holding row now and when it opens.
func (ff frozenFleet) active(row kubeview.AppRow) (*freeze.Freeze, time.Time, bool) {
	if !ff.ok || len(ff.list) == 0 {
		return nil, time.Time{}, false
	}
	return ff.list.Active(ff.now, ff.s.freezeTarget(roles.Target{Cluster: row.Cluster, Environment: ff.s.appEnv(row.Cluster, row.Namespace), Namespace: row.Namespace, App: row.Name}))
}

// filter is the frozen filter of the list (nil when off).
func (ff frozenFleet) filter(on bool) func(kubeview.AppRow) bool {
	if !on {
		return nil
	}
	return func(row kubeview.AppRow) bool { _, _, ok := ff.active(row); return ok }
}

// of maps the frozen rows among rows to when they open (their chips).
func (ff frozenFleet) of(rows []kubeview.AppRow) map[string]string {
	out := map[string]string{}
	for _, row := range rows {
		if _, opens, ok := ff.active(row); ok {
			out[templates.FrozenKey(row.Cluster, row.Namespace, row.Name)] = freezeTime(opens)
		}
	}
	return out
}

// banner is the fleet's banner: when the list is filtered, the freeze
// holding the first frozen row shown (each row's chip says its own).
func (ff frozenFleet) banner(q templates.FleetQuery, rows []kubeview.AppRow) templates.FreezeBannerProps {
	if !q.Filtered() {
		return templates.FreezeBannerProps{}
	}
	for _, row := range rows {
		if f, opens, ok := ff.active(row); ok {
			w, _ := f.WindowAt(ff.now)
			r := freezeRow(f, w, opens)
			return templates.FreezeBannerProps{Active: &r}
		}
	}
	return templates.FreezeBannerProps{}
}
