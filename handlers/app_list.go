package handlers

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/fleetset"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// maxAPILimit caps ?limit= on the JSON list.
const maxAPILimit = 10000

// listRequest is a parsed, validated application-list request.
type listRequest struct {
	query templates.FleetQuery
	limit int
	after string
	// since is the "version.unixtime" a polling fragment already shows.
	since string
}

// parseListRequest validates the list's query parameters. It is a pure
// function of the parameters and the clusters' platform namespaces (by
// cluster name).
func parseListRequest(v url.Values, clusters map[string][]string) (listRequest, error) {
	var lr listRequest
	q := &lr.query
	q.Search = strings.TrimSpace(v.Get("q"))
	if len(q.Search) > 253 {
		return lr, badRequest("q: at most 253 characters")
	}
	q.Cluster = v.Get("cluster")
	if _, ok := clusters[q.Cluster]; q.Cluster != "" && !ok {
		return lr, notFound("cluster " + q.Cluster)
	}
	// A namespace of any cluster: with a cluster filter, one of another
	// cluster matches nothing (the filters change one at a time).
	var namespaces []string
	for _, ns := range clusters {
		namespaces = append(namespaces, ns...)
	}
	q.Namespace = v.Get("namespace")
	if q.Namespace != "" && !slices.Contains(namespaces, q.Namespace) {
		return lr, badRequest("namespace: %q is not a platform namespace", q.Namespace)
	}
	q.Health = v.Get("health")
	if q.Health != "" && !validHealth(q.Health) {
		return lr, badRequest("health: %q is not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown", q.Health)
	}
	q.Sync = v.Get("sync")
	if q.Sync != "" && q.Sync != string(kubeview.SyncSynced) && q.Sync != string(kubeview.SyncOutOfSync) && q.Sync != string(kubeview.SyncUnknown) {
		return lr, badRequest("sync: %q is not one of Synced, OutOfSync, Unknown", q.Sync)
	}
	var err error
	if q.Drift, err = boolParam(v, "drift"); err != nil {
		return lr, err
	}
	if q.Frozen, err = boolParam(v, "frozen"); err != nil {
		return lr, err
	}
	if q.Why, err = boolParam(v, "why"); err != nil {
		return lr, err
	}
	q.Sort = v.Get("sort")
	if q.Sort != "" && q.Sort != kubeview.SortName && q.Sort != kubeview.SortHealth && q.Sort != kubeview.SortDeployed {
		return lr, badRequest("sort: %q is not one of name, health, deployed", q.Sort)
	}
	if p := v.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return lr, badRequest("page: %q is not a page number", p)
		}
		q.Page = n
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxAPILimit {
			return lr, badRequest("limit: %q is not between 1 and %d", l, maxAPILimit)
		}
		lr.limit = n
	}
	lr.after = v.Get("continue")
	lr.since = v.Get("since")
	return lr, nil
}

// boolParam reads an optional true/false query parameter (absent is
// false).
func boolParam(v url.Values, name string) (bool, error) {
	switch s := v.Get(name); s {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, badRequest("%s: %q is not true or false", name, s)
	}
}

func validHealth(h string) bool {
	switch objrules.HealthStatus(h) {
	case objrules.HealthHealthy, objrules.HealthProgressing, objrules.HealthDegraded, objrules.HealthSuspended, objrules.HealthMissing, objrules.HealthUnknown:
		return true
	}
	return false
}

func (lr listRequest) kubeQuery() kubeview.Query {
	q := lr.query
	return kubeview.Query{
		Namespace: q.Namespace, Health: objrules.HealthStatus(q.Health), Sync: kubeview.SyncStatus(q.Sync),
		Search: q.Search, Sort: q.Sort, Drift: q.Drift,
	}
}

// unchanged reports whether a polling fragment that shows "version.unix"
// is still current (see unchangedTag).
func unchanged(since string, version uint64, now time.Time) bool {
	return unchangedTag(since, strconv.FormatUint(version, 10), now)
}

// fleetVersion is the list's version with each cluster's reachability
// (a hash of both when several clusters are configured), so an open
// page shows a cluster going stale, or coming back, at its next poll
// rather than at its minute's refresh.
func fleetVersion(version uint64, states []templates.ClusterState) uint64 {
	if len(states) < 2 {
		return version
	}
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], version)
	h.Write(b[:])
	for _, c := range states {
		h.Write([]byte(c.Name))
		if c.Status.Reachable {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
		}
	}
	return h.Sum64()
}

// clusterNamespaces maps each cluster to its platform namespaces.
func (s *Server) clusterNamespaces() map[string][]string {
	out := make(map[string][]string, len(s.clusters))
	for _, c := range s.clusters {
		out[c.Name] = c.View.Namespaces()
	}
	return out
}

// applications is the application list over every cluster (fleetset
// merges; the one-cluster case is the cluster's own list).
func (s *Server) applications(cluster string, q kubeview.Query) (kubeview.Page, error) {
	members := make([]fleetset.Member, len(s.clusters))
	for i, c := range s.clusters {
		members[i] = fleetset.Member{Name: c.Name, Apps: c.View}
	}
	return fleetset.Applications(members, cluster, q)
}

// clusterStates are the clusters with their caches' state, by name.
func (s *Server) clusterStates() []templates.ClusterState {
	out := make([]templates.ClusterState, len(s.clusters))
	for i, c := range s.clusters {
		out[i] = templates.ClusterState{Name: c.Name, Status: c.View.Status()}
	}
	return out
}

// appList serves GET /: the application list page, or its results fragment
// for HTMX (filters and the self-refresh).
func (s *Server) appList(w http.ResponseWriter, r *http.Request) error {
	lr, err := parseListRequest(r.URL.Query(), s.clusterNamespaces())
	if err != nil {
		return err
	}
	now := s.opts.Now()
	kq := lr.kubeQuery()
	page := max(lr.query.Page, 1)
	kq.Offset, kq.Limit = (page-1)*s.opts.PerPage, s.opts.PerPage
	frozen := s.frozenRows(r.Context())
	res, err := s.applicationsFor(r.Context(), lr.query.Cluster, kq, bothFilters(frozen.filter(lr.query.Frozen), whyFilter(lr.query.Why)))
	if err != nil {
		return err
	}
	states := s.clusterStates()
	version := fleetVersion(res.Version, states)
	if isHTMX(r) && lr.since != "" && unchanged(lr.since, version, now) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	pages := max((res.Matched+s.opts.PerPage-1)/s.opts.PerPage, 1)
	if lr.query.Page > pages && res.Matched > 0 {
		return notFound("page " + strconv.Itoa(lr.query.Page))
	}
	poll := lr.query.Values()
	poll.Set("since", strconv.FormatUint(version, 10)+"."+strconv.FormatInt(now.Unix(), 10))
	results := templates.FleetResults{
		Query: lr.query, Rows: res.Rows, Counts: res.Counts, Matched: res.Matched,
		PerPage: s.opts.PerPage, Pages: pages, Version: res.Version,
		Clusters: states, Now: now, PollURL: paths.Fleet(poll), Frozen: frozen.of(res.Rows),
	}
	if isHTMX(r) {
		return s.render(w, r, http.StatusOK, templates.FleetResultsView(results))
	}
	return s.render(w, r, http.StatusOK, templates.FleetView(templates.FleetPage{
		Layout:     s.layout(r, "apps", "Applications"),
		Namespaces: s.namespaces(),
		Clusters:   s.clusterNames(),
		Results:    results,
		Freeze:     frozen.banner(lr.query, res.Rows),
	}))
}

// applicationsResponse is the JSON of GET /v1/deploy/applications.
type applicationsResponse struct {
	Items    []kubeview.AppRow `json:"items"`
	Total    int               `json:"total"`
	Continue string            `json:"continue,omitempty"`
	Counts   kubeview.Counts   `json:"counts"`
}

// apiApplications serves GET /v1/deploy/applications.
func (s *Server) apiApplications(w http.ResponseWriter, r *http.Request) error {
	lr, err := parseListRequest(r.URL.Query(), s.clusterNamespaces())
	if err != nil {
		return err
	}
	kq := lr.kubeQuery()
	kq.Limit, kq.After = lr.limit, lr.after
	res, err := s.applicationsFor(r.Context(), lr.query.Cluster, kq, bothFilters(s.frozenRows(r.Context()).filter(lr.query.Frozen), whyFilter(lr.query.Why)))
	if errors.Is(err, kubeview.ErrBadContinue) {
		return badRequest("continue: not a token this server issued")
	}
	if err != nil {
		return err
	}
	writeApplications(w, res)
	return nil
}

// listWriteBuffer bounds what the JSON list holds before it writes: the
// answer streams out through it, never whole in memory.
const listWriteBuffer = 32 << 10

// writeApplications writes the JSON list of res, byte for byte what
// writeJSON writes for its applicationsResponse, streamed: the envelope
// around each row's JSON as the fleet cached it (kubeview.RowJSON),
// through a bounded buffer. A page with a row that has no cached JSON
// (not made by kubeview's fleet, or a row that could not be encoded) is
// answered by writeJSON, which also turns an encoding error into a 500.
func writeApplications(w http.ResponseWriter, res kubeview.Page) {
	resp := applicationsResponse{Items: res.Rows, Total: res.Matched, Continue: res.Continue, Counts: res.Counts}
	if res.Rows == nil || len(res.Encoded) != len(res.Rows) || slices.ContainsFunc(res.Encoded, func(e kubeview.RowJSON) bool { return e == nil }) {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	counts, err := json.Marshal(resp.Counts)
	if err != nil {
		writeJSON(w, http.StatusOK, resp) // the same error, answered as writeJSON does
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, listWriteBuffer)
	// A write error is a client that went away: the rest is dropped by
	// bw, as writeJSON drops it.
	_, _ = bw.WriteString(`{"items":[`)
	var row []byte
	for i := range res.Rows {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		row, _ = res.AppendRowJSON(row[:0], i)
		_, _ = bw.Write(row)
	}
	_, _ = bw.WriteString(`],"total":`)
	_, _ = bw.WriteString(strconv.Itoa(resp.Total))
	if resp.Continue != "" {
		tok, _ := json.Marshal(resp.Continue) // a string always encodes
		_, _ = bw.WriteString(`,"continue":`)
		_, _ = bw.Write(tok)
	}
	_, _ = bw.WriteString(`,"counts":`)
	_, _ = bw.Write(counts)
	_, _ = bw.WriteString("}\n")
	_ = bw.Flush()
}

// namespaces are the platform namespaces of every cluster, sorted and
// without repeats.
func (s *Server) namespaces() []string {
	var out []string
	for _, c := range s.clusters {
		out = append(out, c.View.Namespaces()...)
	}
	if len(s.clusters) == 1 {
		return out // the cluster's own order, as before clusters
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// clusterNames are the configured clusters' names, sorted.
func (s *Server) clusterNames() []string {
	out := make([]string, len(s.clusters))
	for i, c := range s.clusters {
		out[i] = c.Name
	}
	return out
}
