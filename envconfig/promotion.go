package envconfig

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Promotion is an environment's `promotion:`: the environment it takes
// versions from (After) and how long those versions must have run Healthy
// and undrifted there before they may be promoted here (Soak).
type Promotion struct {
	// After names the environment before this one (its source of
	// promotions); it orders the columns of the matrix.
	After string `json:"after"`
	// Soak is how long the source must have been Healthy and not drifted
	// (default DefaultPromotionSoak).
	Soak metav1.Duration `json:"soak"`
	// Checks are metrics the source must have held over each check's
	// window for a promotion here (metrics.go, package promcheck): run
	// against the source environment's metrics.
	Checks []Check `json:"checks,omitempty"`
}

// DefaultPromotionSoak is the soak time of a promotion without soak.
const DefaultPromotionSoak = 10 * time.Minute

// SoakOrDefault is Soak, or DefaultPromotionSoak when unset.
func (p Promotion) SoakOrDefault() time.Duration {
	return orDefault(p.Soak, DefaultPromotionSoak)
}

// PromotedFrom is the environment e takes promotions from ("" when e has
// no promotion.after).
func (e *Environment) PromotedFrom() string {
	if e.Promotion == nil {
		return ""
	}
	return e.Promotion.After
}

// PromotionOrder is the environments' names in promotion order, the
// matrix's columns: each environment after the one it is promoted from,
// and otherwise in the order the file declares them (an environment
// without promotion.after starts a chain, and the environments promoted
// from one environment follow it in declared order). Validate refuses
// unknown names and cycles, so every environment is listed once.
func (c *Config) PromotionOrder() []string {
	next := map[string][]string{}
	for _, e := range c.Environments {
		if a := e.PromotedFrom(); a != "" {
			next[a] = append(next[a], e.Name)
		}
	}
	out := make([]string, 0, len(c.Environments))
	seen := map[string]bool{}
	var walk func(name string)
	walk = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		out = append(out, name)
		for _, n := range next[name] {
			walk(n)
		}
	}
	for _, e := range c.Environments {
		if e.PromotedFrom() == "" {
			walk(e.Name)
		}
	}
	for _, e := range c.Environments { // a cycle Validate refused: still list every name
		walk(e.Name)
	}
	return out
}

// validatePromotion checks every environment's promotion: after names
// another environment of the file, the chain of afters has no cycle, and
// soak is not negative.
func (c *Config) validatePromotion(bad func(field, format string, a ...any)) {
	index := map[string]int{}
	for i, e := range c.Environments {
		if _, dup := index[e.Name]; !dup {
			index[e.Name] = i
		}
	}
	for i, e := range c.Environments {
		pr := e.Promotion
		if pr == nil {
			continue
		}
		p := fmt.Sprintf("environments[%d] (%s).promotion", i, e.Name)
		if d := pr.Soak.Duration; d < 0 {
			bad(p+".soak", "%s must not be negative (0: the default %s)", d, DefaultPromotionSoak)
		}
		switch _, known := index[pr.After]; {
		case pr.After == "":
			bad(p+".after", "required: the environment this one is promoted from")
			continue
		case pr.After == e.Name:
			bad(p+".after", "%q is this environment: name the environment before it", pr.After)
			continue
		case !known:
			bad(p+".after", "%q is not an environment of this file (have: %s)", pr.After, strings.Join(c.PromotionOrder(), ", "))
			continue
		}
		// Follow the afters from e: reaching e again is a cycle. Each
		// cycle is reported once, at its first environment in the file.
		path := []string{e.Name}
		for cur := pr.After; cur != ""; {
			j, ok := index[cur]
			if !ok {
				break
			}
			path = append(path, cur)
			if cur == e.Name {
				if first := firstIndex(index, path); first == i {
					bad(p+".after", "the promotion order is a cycle (%s): one environment of it must have no promotion.after", strings.Join(path, " after "))
				}
				break
			}
			if len(path) > len(c.Environments) {
				break // a cycle not through e: reported at its own environments
			}
			cur = c.Environments[j].PromotedFrom()
		}
	}
}

// firstIndex is the smallest index of the environments named in path.
func firstIndex(index map[string]int, path []string) int {
	first := -1
	for _, n := range path {
		if i := index[n]; first < 0 || i < first {
			first = i
		}
	}
	return first
}
