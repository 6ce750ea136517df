package deployplan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Reviewed is what a user reviewed before asking for an apply: the plan's
// source commit and rendered-objects digest.
type Reviewed struct {
	// PlanID names the plan (a history id, or a report file) in messages.
	PlanID         string
	SourceCommit   string
	RenderedDigest string
	// Only names the objects the plan covers ("" for the whole render,
	// SourceInfo.Only).
	Only string
}

// RenderedDigest is "sha256:" and the hex SHA-256 of the canonical JSON of
// the rendered objects: sorted by group, kind, namespace and name, each
// encoded with sorted keys, one per line. It covers every byte an apply
// would send (Secret values included, which the digest does not reveal
// beyond their equality).
func RenderedDigest(objs []*unstructured.Unstructured) (string, error) {
	type entry struct {
		key string
		js  []byte
	}
	es := make([]entry, 0, len(objs))
	for _, o := range objs {
		b, err := json.Marshal(o.Object) // encoding/json sorts map keys
		if err != nil {
			return "", fmt.Errorf("deployplan: digest %s: %w", key(o), err)
		}
		es = append(es, entry{key: key(o), js: b})
	}
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].key != es[j].key {
			return es[i].key < es[j].key
		}
		return string(es[i].js) < string(es[j].js)
	})
	h := sha256.New()
	for _, e := range es {
		h.Write(e.js)
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// SourceMovedReason is the refusal of an apply whose plan is stale.
const SourceMovedReason = "the source moved since this plan: plan again"

// CheckReviewed compares the reviewed plan with the source rendered now; a
// difference is a *RefusalError that says the source moved. nil reviewed
// checks nothing.
func CheckReviewed(rev *Reviewed, r *Rendered) error {
	if rev == nil {
		return nil
	}
	if rev.RenderedDigest == "" {
		return &RefusalError{Reason: fmt.Sprintf("plan %s records no rendered digest (made by an older deploy-web): plan again; nothing was touched", rev.PlanID)}
	}
	digest, err := RenderedDigest(r.Objects)
	if err != nil {
		return err
	}
	switch {
	case rev.SourceCommit != r.Commit:
		return &RefusalError{Reason: fmt.Sprintf("%s (plan %s rendered commit %s, the source is now at %s); nothing was touched",
			SourceMovedReason, rev.PlanID, textfmt.ShortSHA(rev.SourceCommit), textfmt.ShortSHA(r.Commit))}
	case rev.RenderedDigest != digest:
		return &RefusalError{Reason: fmt.Sprintf("%s (plan %s rendered objects %s, they now render as %s at the same commit %s); nothing was touched",
			SourceMovedReason, rev.PlanID, textfmt.ShortDigest(rev.RenderedDigest), textfmt.ShortDigest(digest), textfmt.ShortSHA(r.Commit))}
	}
	return nil
}

// ReviewedPlan checks that data is a ready plan (a dry-run report that
// passes ValidateReport) of environment env and returns what an apply of it
// must find unchanged; id names it in messages. Anything else is a
// *RefusalError.
func ReviewedPlan(data []byte, env, id string) (*Reviewed, error) {
	if vs := ValidateReport(data); len(vs) > 0 {
		return nil, &RefusalError{Reason: fmt.Sprintf("plan %s is not a valid report (%s); nothing was touched", id, vs[0])}
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, &RefusalError{Reason: fmt.Sprintf("plan %s cannot be read: %v; nothing was touched", id, err)}
	}
	d := rep.DeployApply
	switch {
	case d.Environment != env:
		return nil, &RefusalError{Reason: fmt.Sprintf("plan %s is a plan of environment %q, not %q; nothing was touched", id, d.Environment, env)}
	case d.Mode != "dry-run":
		return nil, &RefusalError{Reason: fmt.Sprintf("%s is the report of an apply, not a plan: plan again; nothing was touched", id)}
	case d.Conclusion.Status != StatusReady:
		return nil, &RefusalError{Reason: fmt.Sprintf("plan %s is %s, not ready: only a ready plan is applied; nothing was touched", id, d.Conclusion.Status)}
	}
	return &Reviewed{PlanID: id, SourceCommit: d.Source.Commit, RenderedDigest: d.Source.RenderedDigest, Only: d.Source.Only}, nil
}
