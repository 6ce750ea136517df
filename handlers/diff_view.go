package handlers

import (
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/diffrender"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/web/templates"
)

// Column labels of the diffs. Every diff reads one way, diffrender's (and
// ArgoCD's): the live object on the left, before; the desired state on the
// right, after.
const (
	diffLive    = "Live"
	diffDesired = "Desired"
	diffPlanned = "Planned"
)

// resourceDiffView is the resource panel's diff: the whole diff, or its
// hunks with 3 lines of context when compact, side by side or inline.
func resourceDiffView(md diffrender.ManifestDiff, mode string, compact bool) templates.DiffTableProps {
	var hunks []diffrender.Hunk
	switch {
	case md.NoDesired:
	case compact:
		hunks = md.Diff.Hunks(3)
	case len(md.Diff.Rows) > 0:
		hunks = []diffrender.Hunk{{Rows: md.Diff.Rows}}
	}
	v := diffView(hunks, diffDesired, mode)
	v.NoDesired, v.Equal, v.Added, v.Removed, v.Compact = md.NoDesired, md.Diff.Equal, md.Diff.Added, md.Diff.Removed, compact
	return v
}

// diffView turns hunks into the rows of the template: side by side (mode
// "split", the default) or inline ("unified"). after labels the right
// column, the desired state.
func diffView(hunks []diffrender.Hunk, after, mode string) templates.DiffTableProps {
	v := templates.DiffTableProps{Mode: "split", Before: diffLive, After: after}
	if mode == "unified" {
		v.Mode = "unified"
	}
	for _, h := range hunks {
		dh := templates.DiffHunk{Skipped: h.Skipped}
		if v.Mode == "unified" {
			for _, u := range h.Unified() {
				row := templates.DiffRow{Op: u.Op.String(), LeftNum: u.LeftNum, RightNum: u.RightNum, UnifiedSign: " "}
				switch u.Op {
				case diffrender.Delete:
					row.UnifiedSign, row.LeftText = "−", u.Text
				case diffrender.Insert:
					row.UnifiedSign, row.RightText = "+", u.Text
				default:
					row.LeftText = u.Text
				}
				dh.Rows = append(dh.Rows, row)
			}
		} else {
			for _, r := range h.Rows {
				dh.Rows = append(dh.Rows, templates.DiffRow{Op: r.Op.String(), LeftNum: r.Left.Num, LeftText: r.Left.Text, RightNum: r.Right.Num, RightText: r.Right.Text})
			}
		}
		v.Hunks = append(v.Hunks, dh)
	}
	return v
}

// changeRows pairs each object of a plan with its diff (nil when none was
// kept), side by side with the planned manifest as the desired state.
func changeRows(objs []deployplan.ObjectPlan, diffs []envrun.ObjectDiff) []templates.ChangeRow {
	byKey := make(map[string]*envrun.ObjectDiff, len(diffs))
	for i := range diffs {
		d := &diffs[i]
		byKey[d.Kind+"/"+d.Namespace+"/"+d.Name] = d
	}
	out := make([]templates.ChangeRow, len(objs))
	for i, o := range objs {
		out[i] = templates.ChangeRow{Obj: o}
		d := byKey[o.Kind+"/"+o.Namespace+"/"+o.Name]
		if d == nil {
			continue
		}
		cd := &templates.ChangeDiff{Hidden: d.Hidden, NoLive: d.NoLive, Error: d.Error}
		if !d.Hidden && d.Error == "" {
			cd.View = diffView(d.Hunks, diffPlanned, "split")
			cd.View.Equal, cd.View.Added, cd.View.Removed, cd.View.Compact = d.Equal, d.Added, d.Removed, true
		}
		out[i].Diff = cd
	}
	return out
}
