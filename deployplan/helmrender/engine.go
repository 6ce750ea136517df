package helmrender

// The template set-up (allTemplates, recAllTpls, sortTemplates, the
// include, tpl, required and fail functions) is adapted from
// helm.sh/helm/v4@v4.3.2 pkg/engine/engine.go, Copyright The Helm Authors,
// Apache License 2.0. What differs: every template writes through a
// bounded writer, every range body and template entry takes a step
// (instrument), every function is wrapped (bounds.go), include and tpl
// nest to a fixed depth, lookup and getHostByName return nothing.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"

	ci "helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/common"
)

// stepFunc is the function instrument calls at the top of every template
// and range body.
const stepFunc = "deployWebStep"

// maxIncludeDepth caps how deep include and tpl nest (Helm allows 1,000
// per template name, so a fan-out of two recursions is 2^1000 calls).
const maxIncludeDepth = 100

// engine is one render's state: it is used by one goroutine only.
type engine struct {
	ctx   context.Context
	chart string
	lim   Limits

	steps     int64
	funcBytes int64
	outBytes  int64
	depth     int
	// stop is the first bound the render hit: every later step fails
	// with it, and the render returns it whatever text/template made of it.
	stop error

	// instrumented are the lists already given a step.
	instrumented map[*parse.ListNode]bool
	// current is the template being rendered (its full name), to which
	// a call of a warned function is attributed.
	current string
	// calls are, per warned function, the templates (full names) whose
	// render called it, directly or through include and tpl.
	calls map[string]map[string]bool
	// mutates are the templates whose render changed a shared value (set,
	// unset, merge...): what they drew can reach other templates.
	mutates map[string]bool
}

func newEngine(ctx context.Context, chart string, lim Limits) *engine {
	return &engine{ctx: ctx, chart: chart, lim: lim, instrumented: map[*parse.ListNode]bool{}, calls: map[string]map[string]bool{}, mutates: map[string]bool{}}
}

// fail records the first bound hit and returns it.
func (e *engine) fail(file, reason, hint string) error {
	if e.stop == nil {
		e.stop = &Error{Chart: e.chart, File: file, Reason: reason, Hint: hint}
	}
	return e.stop
}

// step counts one step of the template and checks the deadline.
func (e *engine) step() error {
	if e.stop != nil {
		return e.stop
	}
	e.steps++
	if e.steps > e.lim.MaxSteps {
		return e.fail("", fmt.Sprintf("the templates take more than %d steps (loops, includes, function calls)", e.lim.MaxSteps), "fix the template that loops")
	}
	if err := e.ctx.Err(); err != nil {
		return e.fail("", fmt.Sprintf("the templates did not finish within their deadline (%s)", e.lim.Timeout), "fix the template that loops")
	}
	return nil
}

// boundedWriter is a template's output, capped with every other
// template's: a write over the cap fails, and text/template stops there.
type boundedWriter struct {
	e *engine
	strings.Builder
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.e.stop != nil {
		return 0, w.e.stop
	}
	if w.e.outBytes+int64(len(p)) > w.e.lim.MaxOutputBytes {
		return 0, w.e.fail("", fmt.Sprintf("the templates write more than %d bytes", w.e.lim.MaxOutputBytes), "fix the template that repeats its output")
	}
	if err := w.e.ctx.Err(); err != nil {
		return 0, w.e.fail("", fmt.Sprintf("the templates did not finish within their deadline (%s)", w.e.lim.Timeout), "fix the template that loops")
	}
	w.e.outBytes += int64(len(p))
	return w.Builder.Write(p)
}

// renderable is a template with its values.
type renderable struct {
	tpl      string
	vals     common.Values
	basePath string
}

// chartFile is a template name ("podinfo/templates/x.yaml",
// "podinfo/charts/lib/templates/_h.tpl") relative to the chart folder.
func chartFile(name string) string {
	if _, rest, ok := strings.Cut(name, "/"); ok {
		return rest
	}
	return name
}

var warnRE = regexp.MustCompile(`HELM_ERR_START((?s).*)HELM_ERR_END`)

func warnWrap(s string) string { return "HELM_ERR_START" + s + "HELM_ERR_END" }

// render renders every template of ch with the values top.
func (e *engine) render(ch ci.Charter, top common.Values) (out map[string]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e.stop != nil {
				err = e.stop
				return
			}
			err = &Error{Chart: e.chart, Reason: fmt.Sprintf("the templates fail: %v", r), Hint: "fix the chart"}
		}
	}()
	tpls := allTemplates(ch, top)
	t := template.New("gotpl")
	t.Option("missingkey=zero")
	t.Funcs(e.funcMap(t))
	keys := sortTemplates(tpls)
	for _, name := range keys {
		if _, err := t.New(name).Parse(tpls[name].tpl); err != nil {
			return nil, &Error{Chart: e.chart, File: chartFile(name), Reason: "the template does not parse: " + err.Error(), Hint: "fix the template"}
		}
	}
	e.instrument(t)
	out = make(map[string]string, len(keys))
	for _, name := range keys {
		if strings.HasPrefix(path.Base(name), "_") {
			continue // partials are included, never rendered alone
		}
		vals := tpls[name].vals
		vals["Template"] = common.Values{"Name": name, "BasePath": tpls[name].basePath}
		e.current = name
		w := &boundedWriter{e: e}
		if err := t.ExecuteTemplate(w, name, vals); err != nil {
			if e.stop != nil {
				return nil, e.stop
			}
			msg := err.Error()
			if m := warnRE.FindStringSubmatch(msg); len(m) == 2 {
				msg = m[1]
			}
			return nil, &Error{Chart: e.chart, File: chartFile(name), Reason: "the template fails: " + msg, Hint: "fix the template or the values it reads"}
		}
		out[name] = strings.ReplaceAll(w.String(), "<no value>", "")
	}
	return out, nil
}

// funcMap is Helm's function map, bounded: see bounds.go.
func (e *engine) funcMap(t *template.Template) template.FuncMap {
	fm := helmFuncMap()
	fm["include"] = e.include(t)
	fm["tpl"] = e.tpl(t)
	fm["required"] = func(warn string, val any) (any, error) {
		if val == nil {
			return val, errors.New(warnWrap(warn))
		}
		if s, ok := val.(string); ok && s == "" {
			return val, errors.New(warnWrap(warn))
		}
		return val, nil
	}
	fm["fail"] = func(msg string) (string, error) { return "", errors.New(warnWrap(msg)) }
	// No cluster and no DNS here, as with `helm template`.
	fm["lookup"] = func(string, string, string, string) (map[string]any, error) { return map[string]any{}, nil }
	fm["getHostByName"] = func(string) string { return "" }
	e.bound(fm)
	for name, fn := range fm {
		fm[name] = e.wrap(name, fn)
	}
	fm[stepFunc] = func() (string, error) { return "", e.step() }
	return fm
}

// include is Helm's include, nesting at most maxIncludeDepth deep.
func (e *engine) include(t *template.Template) func(string, any) (string, error) {
	return func(name string, data any) (string, error) {
		if e.depth >= maxIncludeDepth {
			return "", e.fail("", fmt.Sprintf("include and tpl nest more than %d deep (at %q)", maxIncludeDepth, name), "fix the template that includes itself")
		}
		e.depth++
		defer func() { e.depth-- }()
		w := &boundedWriter{e: e}
		err := t.ExecuteTemplate(w, name, data)
		// What an include returns is counted by its wrapper, not as output.
		e.outBytes -= int64(w.Len())
		return w.String(), err
	}
}

// tpl is Helm's tpl: it parses text as a template that sees the
// templates of its caller, instrumented like them.
func (e *engine) tpl(parent *template.Template) func(string, any) (string, error) {
	return func(text string, vals any) (string, error) {
		if e.depth >= maxIncludeDepth {
			return "", e.fail("", fmt.Sprintf("include and tpl nest more than %d deep", maxIncludeDepth), "fix the template that renders itself")
		}
		e.depth++
		defer func() { e.depth-- }()
		t, err := parent.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %w", err)
		}
		t.Option("missingkey=zero")
		fm := template.FuncMap{"include": e.wrap("include", e.include(t)), "tpl": e.wrap("tpl", e.tpl(t))}
		t.Funcs(fm)
		t, err = t.New(parent.Name()).Parse(text)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", text, err)
		}
		e.instrument(t)
		w := &boundedWriter{e: e}
		err = t.Execute(w, vals)
		e.outBytes -= int64(w.Len())
		if err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
		}
		return strings.ReplaceAll(w.String(), "<no value>", ""), nil
	}
}

// instrument gives every template of t, and every range body in them, a
// first action that calls stepFunc, so a loop or a recursion that
// neither writes nor calls a function still counts its steps and stops
// at the deadline.
func (e *engine) instrument(t *template.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Tree.Root == nil {
			continue
		}
		e.instrumentList(tt.Tree, tt.Tree.Root)
	}
}

func (e *engine) instrumentList(tree *parse.Tree, l *parse.ListNode) {
	if l == nil || e.instrumented[l] {
		return
	}
	e.instrumented[l] = true
	for _, n := range l.Nodes {
		e.instrumentNode(tree, n)
	}
	id := parse.NewIdentifier(stepFunc).SetTree(tree).SetPos(l.Pos)
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: l.Pos, Args: []parse.Node{id}}
	pipe := &parse.PipeNode{NodeType: parse.NodePipe, Pos: l.Pos, Cmds: []*parse.CommandNode{cmd}}
	act := &parse.ActionNode{NodeType: parse.NodeAction, Pos: l.Pos, Pipe: pipe}
	l.Nodes = append([]parse.Node{act}, l.Nodes...)
}

func (e *engine) instrumentNode(tree *parse.Tree, n parse.Node) {
	switch x := n.(type) {
	case *parse.ListNode:
		e.instrumentList(tree, x)
	case *parse.RangeNode:
		e.instrumentList(tree, x.List)
		e.instrumentList(tree, x.ElseList)
	case *parse.IfNode:
		e.instrumentList(tree, x.List)
		e.instrumentList(tree, x.ElseList)
	case *parse.WithNode:
		e.instrumentList(tree, x.List)
		e.instrumentList(tree, x.ElseList)
	}
}

// allTemplates returns all templates for a chart and its dependencies,
// each with the values of its scope.
func allTemplates(c ci.Charter, vals common.Values) map[string]renderable {
	templates := make(map[string]renderable)
	recAllTpls(c, templates, vals)
	return templates
}

func recAllTpls(c ci.Charter, templates map[string]renderable, values common.Values) map[string]any {
	vals := values.AsMap()
	subCharts := make(map[string]any)
	accessor, err := ci.NewAccessor(c)
	if err != nil {
		slog.Error("error accessing chart", "error", err)
	}
	chartMetaData := accessor.MetadataAsMap()
	chartMetaData["IsRoot"] = accessor.IsRoot()

	next := map[string]any{
		"Chart":        chartMetaData,
		"Files":        newFiles(accessor.Files()),
		"Release":      vals["Release"],
		"Capabilities": vals["Capabilities"],
		"Values":       make(common.Values),
		"Subcharts":    subCharts,
	}
	if accessor.IsRoot() {
		next["Values"] = vals["Values"]
	} else if vs, err := values.Table("Values." + accessor.Name()); err == nil {
		next["Values"] = vs
	}
	for _, child := range accessor.Dependencies() {
		sub, err := ci.NewAccessor(child)
		if err != nil {
			continue
		}
		subCharts[sub.Name()] = recAllTpls(child, templates, next)
	}
	newParentID := accessor.ChartFullPath()
	for _, t := range accessor.Templates() {
		if t == nil {
			continue
		}
		if accessor.IsLibraryChart() && !strings.HasPrefix(filepath.Base(t.Name), "_") {
			continue
		}
		templates[path.Join(newParentID, t.Name)] = renderable{
			tpl:      string(t.Data),
			vals:     next,
			basePath: path.Join(newParentID, "templates"),
		}
	}
	return next
}

// sortTemplates orders the templates as Helm parses them: higher-level
// (fewer folders) first, then by name, all reversed.
func sortTemplates(tpls map[string]renderable) []string {
	keys := make([]string, 0, len(tpls))
	for k := range tpls {
		keys = append(keys, k)
	}
	sort.Sort(sort.Reverse(byPathLen(keys)))
	return keys
}

type byPathLen []string

func (p byPathLen) Len() int      { return len(p) }
func (p byPathLen) Swap(i, j int) { p[j], p[i] = p[i], p[j] }
func (p byPathLen) Less(i, j int) bool {
	a, b := p[i], p[j]
	ca, cb := strings.Count(a, "/"), strings.Count(b, "/")
	if ca == cb {
		return a < b
	}
	return ca < cb
}
