package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// appPage serves GET /clusters/{cluster}/apps/{namespace}/{name}: header
// and tree; with ?fragment=live (the page's own poll) only the live part.
func (s *Server) appPage(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	name := a.Name
	live, etag, err := s.appLive(r, a, r.URL.Query().Get("selected"))
	if err != nil {
		return err
	}
	if r.URL.Query().Get("fragment") == "live" {
		if isHTMX(r) && unchangedTag(r.URL.Query().Get("since"), etag, s.opts.Now()) {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		return s.render(w, r, http.StatusOK, templates.AppLiveView(live))
	}
	if isHTMX(r) && r.Header.Get("HX-Target") == "panel" {
		// The panel's close button: an empty panel.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		return nil
	}
	p, err := s.appView(r, a, name, live)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.AppView(p))
}

// appView is the whole app page around its live part, titled title: the
// same sections whether or not a resource panel is open (a bookmarked
// panel's page shows the freeze, history and metrics too).
func (s *Server) appView(r *http.Request, a appRef, title string, live templates.AppLive) (templates.AppViewProps, error) {
	history := s.appHistory(r.Context(), a.Cluster(), a.Namespace, a.Name)
	whyPanel, err := s.appWhyPanel(r.Context(), a, true)
	if err != nil {
		return templates.AppViewProps{}, err
	}
	return templates.AppViewProps{Layout: s.layout(r, "apps", title), Live: live, History: &history, Why: &whyPanel,
		Metrics:       s.appMetricsPlaceholder(a),
		Notifications: s.notificationsSection(r.Context(), appNotifyPlace(a)),
		Freeze:        s.freezeBanner(r.Context(), s.appTarget(a))}, nil
}

// appLive builds the live part of the app page and its change tag, for an
// App resolveApp found.
func (s *Server) appLive(r *http.Request, a appRef, selected string) (templates.AppLive, string, error) {
	ns, name, view := a.Namespace, a.Name, a.c.View
	tree, err := view.Tree(ns, name)
	if errors.Is(err, kubeview.ErrAppNotFound) {
		return templates.AppLive{}, "", notFound("app " + ns + "/" + name)
	}
	if err != nil {
		return templates.AppLive{}, "", err
	}
	row, hasRow := view.Row(ns, name)
	row.Cluster = a.Cluster()
	mode := "tree"
	if r.URL.Query().Get("view") == "list" {
		mode = "list"
	}
	now := s.opts.Now()
	l := templates.AppLive{
		Cluster: a.Cluster(), Multi: s.multiCluster(),
		Namespace: ns, Name: name, Row: row, HasRow: hasRow, Tree: tree, View: mode, Selected: selected,
		Now: now, Status: view.Status(),
	}
	if l.History, err = view.History(ns, name); err != nil && !errors.Is(err, kubeview.ErrAppNotFound) {
		return templates.AppLive{}, "", err
	}
	if s.opts.Timeline != nil {
		l.TimelineURL = paths.AppTimeline(a.Cluster(), ns, name, nil)
	}
	l.CanWrite = a.c.Release != nil
	l.Allowed = s.appAllowed(r.Context(), a)
	l.CSRF = auth.CSRFToken(r.Context())
	l.Git = s.appGit(r.Context(), a)
	l.Graph = templates.LayoutTree(tree, func(n kubeview.TreeNode) string { return paths.AppResource(a.Cluster(), ns, name, n.Ref) })
	// The cluster's reachability is in the tag: the page shows it going
	// stale, or coming back, at its next poll.
	etag := changeTag(row, tree, l.History, l.Status.Reachable, l.Git)
	q := url.Values{"fragment": {"live"}, "since": {etag + "." + strconv.FormatInt(now.Unix(), 10)}}
	if mode == "list" {
		q.Set("view", "list")
	}
	if selected != "" {
		q.Set("selected", selected)
	}
	l.PollURL = paths.WithQuery(paths.App(a.Cluster(), ns, name), q)
	return l, etag, nil
}

// changeTag is a short hash of what the live part shows.
func changeTag(v ...any) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, x := range v {
		_ = enc.Encode(x)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// unchangedTag reports whether a polling fragment that shows "tag.unix" is
// still current: the same tag, shown less than a minute ago (so its
// relative times stay right). The one freshness rule of every poll.
func unchangedTag(since, tag string, now time.Time) bool {
	i := strings.LastIndex(since, ".")
	if i < 0 || since[:i] != tag {
		return false
	}
	unix, err := strconv.ParseInt(since[i+1:], 10, 64)
	return err == nil && now.Unix()-unix < 60
}

// clearActions serves GET /clusters/{cluster}/apps/{namespace}/{name}/actions/clear: an empty
// actions area (the confirmation's Cancel).
func (s *Server) clearActions(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	return nil
}
