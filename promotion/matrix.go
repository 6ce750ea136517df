package promotion

import (
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// Column is one environment of the matrix, in promotion order.
type Column struct {
	Env       string `json:"environment"`
	Cluster   string `json:"cluster,omitempty"`
	Namespace string `json:"namespace"`
	Protected bool   `json:"protected"`
	// After is the environment this one is promoted from ("" for none).
	After string `json:"after,omitempty"`
	// Soak is the soak time of a promotion into this environment (0
	// without After).
	Soak time.Duration `json:"-"`
	// SoakSeconds is Soak in the JSON (set by Build).
	SoakSeconds int64 `json:"soakSeconds,omitempty"`
	// Commit is the source commit of the environment's last successful
	// apply ("" when unknown).
	Commit string `json:"commit,omitempty"`
	// Unavailable says why the environment's Apps could not be read ("" when
	// they were): its cells are then unknown, not absent.
	Unavailable string `json:"unavailable,omitempty"`
}

// Cell is one App in one environment.
type Cell struct {
	// Present is false when the environment runs no App of that name.
	Present bool `json:"present"`
	// Version is the declared version (the image tag), Image the declared
	// image and Digest its digest when the reference pins one.
	Version string `json:"version,omitempty"`
	Image   string `json:"image,omitempty"`
	Digest  string `json:"digest,omitempty"`
	// Running are the versions the pods run, oldest first.
	Running    []kubeview.VersionCount `json:"running,omitempty"`
	Health     objrules.Health         `json:"health"`
	Sync       kubeview.SyncStatus     `json:"sync,omitempty"`
	Drift      int                     `json:"drift"`
	DeployedAt time.Time               `json:"deployedAt,omitzero"`
	// Differs is true when the environment this one is promoted from
	// runs another version of the App (or runs it where this one does
	// not); PrevVersion is the version there ("" when it runs none).
	Differs     bool   `json:"differs"`
	PrevVersion string `json:"prevVersion,omitempty"`
}

// Row is one App across the columns (Cells[i] is in Columns[i]).
type Row struct {
	App   string `json:"app"`
	Cells []Cell `json:"cells"`
}

// Matrix is Apps (rows, by name) by environments (columns).
type Matrix struct {
	Columns []Column `json:"columns"`
	Rows    []Row    `json:"rows"`
}

// Build makes the matrix of cols (in promotion order) from apps, each
// column's App rows by environment name. An App appears in a row when any
// column runs it; rows are sorted by name. A column whose Unavailable is
// set has no Apps, and its neighbours are not marked against it.
func Build(cols []Column, apps map[string][]kubeview.AppRow) Matrix {
	m := Matrix{Columns: slices.Clone(cols)}
	for i := range m.Columns {
		m.Columns[i].SoakSeconds = int64(m.Columns[i].Soak / time.Second)
	}
	byApp := map[string][]Cell{}
	for i, c := range cols {
		if c.Unavailable != "" {
			continue
		}
		for _, r := range apps[c.Env] {
			cells := byApp[r.Name]
			if cells == nil {
				cells = make([]Cell, len(cols))
				byApp[r.Name] = cells
			}
			cells[i] = cellOf(r)
		}
	}
	col := map[string]int{}
	for i, c := range cols {
		col[c.Env] = i
	}
	for name, cells := range byApp {
		for i, c := range cols {
			j, ok := col[c.After]
			if !ok || c.Unavailable != "" || cols[j].Unavailable != "" {
				continue
			}
			prev, cur := cells[j], &cells[i]
			if !prev.Present && !cur.Present {
				continue
			}
			cur.PrevVersion = prev.Version
			cur.Differs = !SameRelease(prev, *cur)
		}
		m.Rows = append(m.Rows, Row{App: name, Cells: cells})
	}
	slices.SortFunc(m.Rows, func(a, b Row) int { return strings.Compare(a.App, b.App) })
	return m
}

// cellOf is an App's row as a cell.
func cellOf(r kubeview.AppRow) Cell {
	ref := appcr.ParseImageRef(r.Image)
	return Cell{Present: true, Version: r.Version, Image: r.Image, Digest: ref.Digest, Running: r.Running,
		Health: r.Health, Sync: r.Sync.Status, Drift: r.Drift, DeployedAt: r.LastDeployed}
}

// SameRelease reports whether two cells declare the same release of an
// App: both present, the same version, and the same digest when both pin
// one.
func SameRelease(a, b Cell) bool {
	if !a.Present || !b.Present || a.Version != b.Version {
		return false
	}
	return a.Digest == "" || b.Digest == "" || a.Digest == b.Digest
}

// Query filters the matrix's rows (the page's bookmarkable filters).
type Query struct {
	// Search is a case-insensitive substring of the App's name.
	Search string
	// Differs keeps the rows with at least one marked cell.
	Differs bool
	// Health keeps the rows with at least one cell of that health.
	Health objrules.HealthStatus
}

// Filter returns m with the rows q selects.
func (m Matrix) Filter(q Query) Matrix {
	out := Matrix{Columns: m.Columns}
	search := strings.ToLower(q.Search)
	for _, r := range m.Rows {
		if search != "" && !strings.Contains(strings.ToLower(r.App), search) {
			continue
		}
		if q.Differs && !slices.ContainsFunc(r.Cells, func(c Cell) bool { return c.Differs }) {
			continue
		}
		if q.Health != "" && !slices.ContainsFunc(r.Cells, func(c Cell) bool { return c.Present && c.Health.Status == q.Health }) {
			continue
		}
		out.Rows = append(out.Rows, r)
	}
	return out
}

// Cell returns the cell of app in env, and whether the matrix has both.
func (m Matrix) Cell(app, env string) (Cell, bool) {
	i := slices.IndexFunc(m.Columns, func(c Column) bool { return c.Env == env })
	if i < 0 {
		return Cell{}, false
	}
	for _, r := range m.Rows {
		if r.App == app {
			return r.Cells[i], true
		}
	}
	return Cell{}, false
}
