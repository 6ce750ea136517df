package deployplan

import (
	"fmt"
	"sort"
	"strings"
)

// One blocker per root cause. A check finds its problems object by object
// (a container with the wrong tag, a Job that is not allowlisted); the
// report holds one blocker per kind of problem, whose id is the kind alone
// ("tag-not-catalog-commit", "job-not-allowlisted") and whose affected list
// names every object (or catalog entry) concerned. The ids are stable and
// documented in docs/plan-and-apply.md, "The report".

// maxBlockerDetails bounds how many per-object details a grouped message
// quotes (the affected list is complete).
const maxBlockerDetails = 5

// issues collects per-object findings and turns them into one blocker per
// kind.
type issues struct {
	order []string
	byID  map[string]*issue
}

type issue struct {
	summary  string
	hint     string
	affected []string
	details  []string
	seen     map[string]bool
}

func newIssues() *issues { return &issues{byID: map[string]*issue{}} }

// add records that ref has problem id; detail says what is wrong with it.
// summary and hint are the blocker's, set by the first add (a later
// setHint may replace the hint).
func (is *issues) add(id, ref, detail, summary, hint string) {
	it, ok := is.byID[id]
	if !ok {
		it = &issue{summary: summary, hint: hint, seen: map[string]bool{}}
		is.byID[id] = it
		is.order = append(is.order, id)
	}
	if it.seen[ref] {
		return
	}
	it.seen[ref] = true
	it.affected = append(it.affected, ref)
	it.details = append(it.details, detail)
}

func (is *issues) has(id string) bool { return is.byID[id] != nil }

func (is *issues) setHint(id, hint string) {
	if it := is.byID[id]; it != nil {
		it.hint = hint
	}
}

// blockers returns one blocker per kind, sorted by id.
func (is *issues) blockers() []Blocker {
	out := []Blocker{}
	for _, id := range is.order {
		it := is.byID[id]
		out = append(out, Blocker{ID: id, Message: groupMessage(it.summary, it.details), UnblockHint: it.hint, Affected: it.affected})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// groupMessage is summary, then the first details.
func groupMessage(summary string, details []string) string {
	if len(details) == 1 && summary == "" {
		return details[0]
	}
	shown := details
	if len(shown) > maxBlockerDetails {
		shown = shown[:maxBlockerDetails]
	}
	s := strings.Join(shown, "; ")
	if n := len(details) - len(shown); n > 0 {
		s += fmt.Sprintf("; and %d more (see affected)", n)
	}
	if summary == "" {
		return s
	}
	return summary + ": " + s
}

// groupBlockers merges blockers of the same kind: an id "kind:ref" (the
// form the cluster checks use) joins the blocker "kind" with ref in its
// affected list. Identical ids are one blocker. The result is sorted by id.
func groupBlockers(bs []Blocker) []Blocker {
	type group struct {
		b        Blocker
		msgs     []string
		hints    []string
		affected []string
		seen     map[string]bool
	}
	groups := map[string]*group{}
	var order []string
	seenID := map[string]bool{}
	for _, b := range bs {
		if seenID[b.ID] && !strings.Contains(b.ID, ":") && len(b.Affected) == 0 {
			continue
		}
		seenID[b.ID] = true
		kind, ref, _ := strings.Cut(b.ID, ":")
		g, ok := groups[kind]
		if !ok {
			g = &group{b: Blocker{ID: kind}, seen: map[string]bool{}}
			groups[kind] = g
			order = append(order, kind)
		}
		refs := append([]string{}, b.Affected...)
		if ref != "" {
			refs = append(refs, ref)
		}
		fresh := len(refs) == 0 && len(g.msgs) == 0
		for _, r := range refs {
			if !g.seen[r] {
				g.seen[r] = true
				g.affected = append(g.affected, r)
				fresh = true
			}
		}
		if !fresh {
			continue
		}
		if !contains(g.msgs, b.Message) {
			g.msgs = append(g.msgs, b.Message)
		}
		if b.UnblockHint != "" && !contains(g.hints, b.UnblockHint) {
			g.hints = append(g.hints, b.UnblockHint)
		}
	}
	out := make([]Blocker, 0, len(order))
	for _, k := range order {
		g := groups[k]
		b := g.b
		b.Message = groupMessage("", g.msgs)
		if len(g.msgs) > 1 {
			b.Message = fmt.Sprintf("%d problems: %s", len(g.msgs), b.Message)
		}
		hints := g.hints
		if len(hints) > 3 {
			hints = append(hints[:3:3], "…")
		}
		b.UnblockHint = strings.Join(hints, "; ")
		b.Affected = g.affected
		out = append(out, b)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// affectedList joins at most max entries of an affected list.
func affectedList(affected []string, max int) string {
	if len(affected) <= max {
		return strings.Join(affected, ", ")
	}
	return strings.Join(affected[:max], ", ") + fmt.Sprintf(", and %d more", len(affected)-max)
}

// driftLines is the terminal form of the objects' drift, one line per
// field; nil when no object drifted.
func driftLines(objs []ObjectPlan) []string {
	var out []string
	for _, o := range objs {
		for _, f := range o.Drift {
			out = append(out, fmt.Sprintf("%s/%s %s = %s (by %s, %s)", o.Kind, o.Name, f.Path, f.Live, f.Manager, f.Operation))
		}
	}
	return out
}
