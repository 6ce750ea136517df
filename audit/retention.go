package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/hanzoai/deploy-web/internal/lease"
)

// Policy is how many records of a stream are kept and for how long: a
// record is trimmed once Keep newer ones exist or once it is older than
// MaxAge. Zero means the default; negative means no limit.
type Policy struct {
	Keep   int
	MaxAge time.Duration
}

// Retention defaults. Refused records live in streams of their own
// (streamKey.Refused), kept DefaultRefusedKeep deep, so that no number of
// refusals trims a record of a write.
const (
	DefaultKeep        = 200
	DefaultMaxAge      = 90 * 24 * time.Hour
	DefaultRefusedKeep = 100
)

// Retention is the policy per environment; streams of Apps outside
// environments, and environments not listed, follow Default. The streams
// of refused records follow Refused (Keep DefaultRefusedKeep, MaxAge the
// default, when zero).
type Retention struct {
	Default      Policy
	Environments map[string]Policy
	Refused      Policy
}

// forStream is the effective policy of the stream k.
func (r Retention) forStream(k streamKey) Policy {
	if !k.Refused {
		return r.For(k.Environment)
	}
	p := r.Refused
	if p.Keep == 0 {
		p.Keep = DefaultRefusedKeep
	}
	if p.MaxAge == 0 {
		p.MaxAge = DefaultMaxAge
	}
	return p
}

// For is the effective policy of environment ("" for an App's stream).
func (r Retention) For(environment string) Policy {
	p, ok := r.Environments[environment]
	if !ok || environment == "" {
		p = r.Default
	}
	if p.Keep == 0 {
		p.Keep = DefaultKeep
	}
	if p.MaxAge == 0 {
		p.MaxAge = DefaultMaxAge
	}
	return p
}

// trimThrough is the sequence number through which a stream's records
// (ascending by sequence number) are trimmed, 0 for none. Only a prefix
// is ever trimmed, so the kept records stay one chain: the records beyond
// the Keep newest, and the oldest run of records older than MaxAge (a
// record older than MaxAge after a newer one, from a skewed clock, waits
// for it).
func trimThrough(entries []*entry, p Policy, now time.Time) int64 {
	var k int64
	if n := len(entries); p.Keep >= 0 && n > p.Keep {
		k = entries[n-p.Keep-1].seq
	}
	if p.MaxAge >= 0 {
		cut := now.Add(-p.MaxAge)
		for _, e := range entries {
			if !e.when().Before(cut) {
				break
			}
			k = max(k, e.seq)
		}
	}
	return k
}

// RetentionLeaseName is the Lease, in deploy-web's namespace, whose holder
// enforces retention.
const RetentionLeaseName = "deploy-web-audit-retention"

// RetainerOptions configure a Retainer.
type RetainerOptions struct {
	// Identity names this replica in the Lease (pod name); required and
	// unique per replica.
	Identity  string
	Retention Retention
	// Interval between passes while leading (default 10 minutes).
	Interval time.Duration
	// Lease timing (defaults 30s, 20s, 5s), as client-go's leader
	// election defines it.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// OrphanAge is how old an unreferenced part is before it is deleted
	// (default 1 hour; a part is written before its record).
	OrphanAge time.Duration
	// MaxDeletes bounds the deletes of one pass (default 1000).
	MaxDeletes int
}

// Retainer enforces retention on a Store under a Lease.
type Retainer struct {
	s      *Store
	leases coordinationv1client.LeasesGetter
	o      RetainerOptions
}

// NewRetainer returns a retainer of s; leases is clientset.CoordinationV1().
func NewRetainer(s *Store, leases coordinationv1client.LeasesGetter, o RetainerOptions) (*Retainer, error) {
	if o.Identity == "" {
		return nil, errors.New("audit: retention needs this replica's identity (its pod name)")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Interval, 10*time.Minute)
	def(&o.LeaseDuration, 30*time.Second)
	def(&o.RenewDeadline, 20*time.Second)
	def(&o.RetryPeriod, 5*time.Second)
	def(&o.OrphanAge, time.Hour)
	if o.MaxDeletes <= 0 {
		o.MaxDeletes = 1000
	}
	return &Retainer{s: s, leases: leases, o: o}, nil
}

// Run contends for the Lease until ctx ends; while this replica holds it,
// it trims every Interval (first at once). Losing the Lease cancels the
// pass under way before its next delete; ending ctx releases the Lease
// once the pass under way stopped (internal/lease).
func (r *Retainer) Run(ctx context.Context) error {
	err := lease.Run(ctx, r.leases, lease.Config{Namespace: r.s.ns, Name: RetentionLeaseName, Identity: r.o.Identity,
		Labels:        map[string]string{LabelManagedBy: managedBy},
		LeaseDuration: r.o.LeaseDuration, RenewDeadline: r.o.RenewDeadline, RetryPeriod: r.o.RetryPeriod}, r.lead)
	if err != nil {
		return fmt.Errorf("audit: retention lease: %w", err)
	}
	return nil
}

// lead trims until ctx (the term) ends.
func (r *Retainer) lead(ctx context.Context) {
	leading := func() bool { return ctx.Err() == nil }
	for {
		n, err := r.trim(ctx, leading)
		if err != nil && ctx.Err() == nil {
			r.s.log.WarnContext(ctx, "audit: retention pass", "identity", r.o.Identity, "deleted", n, "err", err)
		} else if n > 0 {
			r.s.log.InfoContext(ctx, "audit: retention pass", "identity", r.o.Identity, "deleted", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.o.Interval):
		}
	}
}

// trim is one retention pass: per stream, it records the boundary in the
// stream head, then deletes the trimmed records oldest first (head, then
// parts), then the parts no record names. It stops before any delete once
// leading says this replica no longer leads, or ctx ends.
func (r *Retainer) trim(ctx context.Context, leading func() bool) (int, error) {
	s := r.s
	ix := s.idx.Load()
	if ix == nil {
		var err error
		if ix, err = s.load(ctx, indexSelector); err != nil {
			return 0, err
		}
	}
	now := s.now()
	deleted := 0
	del := func(name string) error {
		if deleted >= r.o.MaxDeletes {
			return errStop
		}
		if ctx.Err() != nil || !leading() {
			return errStop
		}
		err := s.kube.ConfigMaps(s.ns).Delete(ctx, name, metav1.DeleteOptions{})
		switch {
		case err == nil:
			deleted++
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("audit: retention: delete %s: %w", name, err)
		}
		return nil
	}
	for _, ss := range ix.snapshot() {
		k := trimThrough(ss.entries, r.o.Retention.forStream(ss.head.Key), now)
		if k == 0 {
			continue
		}
		var last *entry
		for _, e := range ss.entries {
			if e.seq == k {
				last = e
			}
		}
		if last == nil {
			continue
		}
		if !leading() {
			return deleted, nil
		}
		if err := s.updateHead(ctx, ix.sig, ss.stream, ss.head.Key, nil, func(st *streamState) bool {
			if st.TrimmedThrough >= k {
				return false
			}
			st.TrimmedThrough, st.TrimmedHash = k, last.hash
			return true
		}); err != nil {
			return deleted, err
		}
		for _, e := range ss.entries {
			if e.seq > k {
				break
			}
			if err := del(e.name); err != nil {
				return deleted, stopped(err)
			}
			for _, p := range e.env.Manifests.Parts {
				if err := del(p.Name); err != nil {
					return deleted, stopped(err)
				}
			}
		}
	}
	// Parts no record names, old enough not to be a record being written.
	refs := ix.referencedParts()
	var orphans []string
	err := s.scan(ctx, partSelector, func(m metav1.Object) {
		if !refs[m.GetName()] && now.Sub(m.GetCreationTimestamp().Time) > r.o.OrphanAge {
			orphans = append(orphans, m.GetName())
		}
	})
	if err != nil {
		return deleted, err
	}
	for _, name := range orphans {
		if err := del(name); err != nil {
			return deleted, stopped(err)
		}
	}
	return deleted, nil
}

// errStop ends a pass: the limit of deletes, a lost Lease or an ended ctx.
var errStop = errors.New("audit: retention pass stopped")

func stopped(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}
