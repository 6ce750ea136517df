package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/hostlist"
	"github.com/hanzoai/deploy-web/internal/lease"
)

// LeaseName is the Lease whose holder is the one replica that sends.
const LeaseName = "deploy-web-notify"

// Bounds of a Secret value the sender reads.
const (
	maxSecretBytes = 4 << 10
	// MinHMACKeyBytes is the shortest webhook key accepted: 32 random
	// bytes (openssl rand -hex 32) are recommended.
	MinHMACKeyBytes = 16
)

// Options configure a Sender; zero fields take the defaults named.
type Options struct {
	// Namespace is deploy-web's own: the subscriptions, delivery logs,
	// Secrets and the Lease live there. Required.
	Namespace string
	// Hosts is the delivery allowlist (notifications.hosts): host or
	// host:port, compared exactly, ASCII letter case aside.
	Hosts []string
	// Identity is this replica's (its pod name). Required.
	Identity string
	// MaxAttempts per message (4); Backoff the first wait (1s), doubling
	// up to MaxBackoff (30s); a 429's Retry-After is honoured up to
	// MaxRetryAfter (60s).
	MaxAttempts   int
	Backoff       time.Duration
	MaxBackoff    time.Duration
	MaxRetryAfter time.Duration
	// FlushInterval is how often delivery logs are written (5s): one write
	// per subscription that delivered since, not one per delivery.
	FlushInterval time.Duration
	// QueueSize bounds the events waiting (1000); more are dropped, logged.
	QueueSize int
	// Workers deliver in parallel (2).
	Workers int
	// DedupSize and DedupTTL bound the memory of sent messages (10,000
	// keys, 7 days).
	DedupSize int
	DedupTTL  time.Duration
	// Lease timings (15s, 10s, 5s): the holder writes the Lease every
	// RetryPeriod; a crashed holder is replaced within LeaseDuration.
	// (A holder that stops cleanly releases the Lease at once.)
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Dialer opens connections (a net.Dialer); tests count dials.
	Dialer Dialer
	// Resolver looks listed names up (net.DefaultResolver).
	Resolver Resolver
	// OnLead, if set, is called (in its own goroutine) each time this
	// replica starts to deliver: the place to Notify the current state
	// again (Apps degraded now), as events seen while no replica led were
	// dropped. What went out before is not sent twice.
	OnLead func(ctx context.Context)
	// Now is the clock (time.Now).
	Now func() time.Time
	// Log gets one line per delivery (no URL secret, no key).
	Log *slog.Logger

	// sleep replaces the backoff wait in tests.
	sleep func(ctx context.Context, d time.Duration) error
}

// Sender delivers events to the subscriptions that want them, from the
// replica holding the Lease only.
type Sender struct {
	kube   kubernetes.Interface
	store  *Store
	o      Options
	client *http.Client
	retry  retryPolicy

	leading atomic.Bool
	queue   chan Event
	// routed counts the events the leader took off the queue and routed
	// (their messages handed to the workers, or held, or dropped);
	// delivering counts the messages handed to the workers and not yet
	// delivered. With the debouncer's held messages they tell when the
	// sender is idle (idle), an explicit signal instead of a wait.
	routed     atomic.Uint64
	delivering atomic.Int64

	mu      sync.Mutex // guards the fields below
	dedup   *dedup
	debounc *Debouncer
	batches map[string]*logBatch // by subscription id, not yet written
	subs    []Subscription
	subsAt  time.Time
	// told are the subscriptions and Apps a degraded message went out to
	// (or was tried for) and no recovered since: one degraded message per
	// degradation, however often the App flaps between Degraded and
	// another unhealthy state or its revision changes meanwhile (at most
	// DedupSize).
	told map[episode]bool
}

// episode names one subscription's view of one App's degradation.
type episode struct {
	sub string
	app appKey
}

// NewSender returns a sender; Run makes it contend for the Lease.
func NewSender(kube kubernetes.Interface, store *Store, o Options) (*Sender, error) {
	if o.Namespace == "" || o.Identity == "" {
		return nil, errors.New("notify: the sender needs deploy-web's namespace and this replica's identity (its pod name)")
	}
	for i, h := range o.Hosts {
		if err := hostlist.Check(h); err != nil {
			return nil, fmt.Errorf("notify: notifications.hosts[%d]: %v", i, err)
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	defInt := func(n *int, v int) {
		if *n <= 0 {
			*n = v
		}
	}
	def(&o.Backoff, time.Second)
	def(&o.MaxBackoff, 30*time.Second)
	def(&o.MaxRetryAfter, time.Minute)
	def(&o.FlushInterval, 5*time.Second)
	def(&o.DedupTTL, 7*24*time.Hour)
	def(&o.LeaseDuration, 15*time.Second)
	def(&o.RenewDeadline, 10*time.Second)
	def(&o.RetryPeriod, 5*time.Second)
	defInt(&o.MaxAttempts, 4)
	defInt(&o.QueueSize, 1000)
	defInt(&o.Workers, 2)
	defInt(&o.DedupSize, 10000)
	if o.Dialer == nil {
		o.Dialer = &net.Dialer{Timeout: RequestTimeout, KeepAlive: 30 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.sleep == nil {
		o.sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		}
	}
	o.Hosts = slices.Clone(o.Hosts)
	return &Sender{
		kube: kube, store: store, o: o,
		client:  newHTTPClient(o.Hosts, o.Dialer, o.Resolver),
		retry:   retryPolicy{maxAttempts: o.MaxAttempts, backoff: o.Backoff, maxBackoff: o.MaxBackoff, maxRetryAfter: o.MaxRetryAfter, sleep: o.sleep, now: o.Now},
		queue:   make(chan Event, o.QueueSize),
		dedup:   newDedup(o.DedupSize, o.DedupTTL),
		debounc: NewDebouncer(o.QueueSize),
		batches: map[string]*logBatch{},
		told:    map[episode]bool{},
	}, nil
}

// Leading reports whether this replica holds the Lease now.
func (s *Sender) Leading() bool { return s.leading.Load() }

// Notify hands ev to the sender without blocking. Every replica calls it
// for what it sees; only the one holding the Lease delivers, the others
// drop ev. A full queue drops ev too (logged).
func (s *Sender) Notify(ev Event) {
	if !s.leading.Load() {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = s.o.Now()
	}
	select {
	case s.queue <- ev:
	default:
		s.o.Log.Warn("notify: queue full, event dropped", "queue", cap(s.queue), "trigger", ev.Trigger, "app", ev.App)
	}
}

// Run contends for the Lease until ctx ends; while this replica holds it,
// it delivers. Losing the Lease stops delivery (the messages under way
// finish their attempt) and writes the delivery logs; ending ctx releases
// the Lease.
func (s *Sender) Run(ctx context.Context) error {
	err := lease.Run(ctx, s.kube.CoordinationV1(), lease.Config{Namespace: s.o.Namespace, Name: LeaseName, Identity: s.o.Identity,
		Labels: map[string]string{LabelManagedBy: managedBy}, LeaseDuration: s.o.LeaseDuration, RenewDeadline: s.o.RenewDeadline,
		RetryPeriod: s.o.RetryPeriod}, s.lead)
	s.client.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	return nil
}

// lead delivers until ctx (the term) ends.
func (s *Sender) lead(ctx context.Context) {
	if ctx.Err() != nil {
		return // a term that ended before it began
	}
	// What the previous holder sent, so that a restart or a handover does
	// not send it again.
	if keys, err := s.store.sentKeys(ctx); err != nil {
		s.o.Log.WarnContext(ctx, "notify: load sent keys", "err", err)
	} else {
		s.mu.Lock()
		for _, k := range keys {
			s.dedup.add(k.Key, k.Time)
		}
		s.mu.Unlock()
	}
	// Events queued in an earlier term are stale, and so is what this
	// replica told then: another replica may have sent recovered since.
	for len(s.queue) > 0 {
		<-s.queue
	}
	s.mu.Lock()
	clear(s.told)
	s.mu.Unlock()
	s.leading.Store(true)
	defer s.leading.Store(false)
	if s.o.OnLead != nil {
		go s.o.OnLead(ctx)
	}

	jobs := make(chan job)
	var wg sync.WaitGroup
	for range s.o.Workers {
		wg.Go(func() {
			for j := range jobs {
				s.deliverJob(ctx, j)
				s.delivering.Add(-1)
			}
		})
	}
	tick := time.NewTicker(time.Second)
	flush := time.NewTicker(s.o.FlushInterval)
	defer func() {
		tick.Stop()
		flush.Stop()
		close(jobs)
		wg.Wait()
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		s.flush(fctx)
	}()
	send := func(js []job) bool {
		for _, j := range js {
			s.delivering.Add(1)
			select {
			case jobs <- j:
			case <-ctx.Done():
				s.delivering.Add(-1)
				return false
			}
		}
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-s.queue:
			js, err := s.route(ctx, ev)
			if err != nil {
				s.o.Log.WarnContext(ctx, "notify: route event", "trigger", ev.Trigger, "app", ev.App, "err", err)
			}
			if !send(js) {
				return
			}
			s.routed.Add(1)
		case <-tick.C:
			if !send(s.due()) {
				return
			}
		case <-flush.C:
			s.flush(ctx)
		}
	}
}

// idle reports whether the sender has routed n events in all and has
// no message held (a degraded one waiting for its "for") or being
// delivered: nothing it was told can still be sent.
func (s *Sender) idle(n uint64) bool {
	s.mu.Lock()
	held := s.debounc.Len()
	s.mu.Unlock()
	return s.routed.Load() >= n && s.delivering.Load() == 0 && held == 0
}

// job is one message for one subscription.
type job struct {
	sub Subscription
	ev  Event
}

// subscriptions returns the stored subscriptions, read at most once per
// FlushInterval.
func (s *Sender) subscriptions(ctx context.Context) ([]Subscription, error) {
	s.mu.Lock()
	if s.subs != nil && s.o.Now().Sub(s.subsAt) < s.o.FlushInterval {
		defer s.mu.Unlock()
		return s.subs, nil
	}
	s.mu.Unlock()
	subs, err := s.store.List(ctx)
	if err != nil {
		return nil, err
	}
	if subs == nil {
		subs = []Subscription{}
	}
	s.mu.Lock()
	s.subs, s.subsAt = subs, s.o.Now()
	s.mu.Unlock()
	return subs, nil
}

// route decides which subscriptions get ev now, holds degraded ones for
// their "for", and lets "recovered" pass only to subscriptions that were
// told of the degradation.
func (s *Sender) route(ctx context.Context, ev Event) ([]job, error) {
	if ev.Trigger == triggerSettled {
		s.mu.Lock()
		s.debounc.Settled(ev)
		s.mu.Unlock()
		return nil, nil
	}
	subs, err := s.subscriptions(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var silenced []string
	if ev.Trigger == TriggerRecovered {
		silenced = s.debounc.Recovered(ev)
	}
	var js []job
	for _, sub := range subs {
		tr, ok := sub.Wants(ev.Trigger)
		if !ok || !sub.Scope.Matches(ev) || slices.Contains(silenced, sub.ID) {
			continue
		}
		if tr.Type == TriggerDegraded && tr.For > 0 && s.debounc.Degraded(sub.ID, ev, ev.Time, time.Duration(tr.For)*time.Second) {
			continue
		}
		js = append(js, job{sub: sub, ev: ev})
	}
	return js, nil
}

// due returns the held degraded messages whose time has come.
func (s *Sender) due() []job {
	s.mu.Lock()
	ps := s.debounc.Due(s.o.Now())
	subs := s.subs
	s.mu.Unlock()
	var js []job
	for _, p := range ps {
		// The subscription as it is now: deleted or changed meanwhile, no
		// message.
		i := slices.IndexFunc(subs, func(x Subscription) bool { return x.ID == p.SubscriptionID })
		if i < 0 {
			continue
		}
		if _, ok := subs[i].Wants(TriggerDegraded); ok && subs[i].Scope.Matches(p.Event) {
			js = append(js, job{sub: subs[i], ev: p.Event})
		}
	}
	return js
}

// deliverJob sends one message unless it went out before, and logs it.
func (s *Sender) deliverJob(ctx context.Context, j job) {
	key := dedupKey(j.sub.ID, j.ev)
	ep := episode{j.sub.ID, j.ev.appKey()}
	now := s.o.Now()
	s.mu.Lock()
	if s.dedup.seen(key, now) || (j.ev.Trigger == TriggerDegraded && s.told[ep]) {
		s.mu.Unlock()
		return
	}
	// Marked before sending, so that a duplicate queued meanwhile is not
	// sent twice; forgotten again if the delivery fails (a later event of
	// the same key may try again). The episode stays marked when the
	// delivery fails: the attempts and their backoff are the retry, and
	// the delivery log says it failed; a flapping App does not resend.
	s.dedup.add(key, now)
	switch j.ev.Trigger {
	case TriggerDegraded:
		if len(s.told) < s.o.DedupSize {
			s.told[ep] = true
		}
	case TriggerRecovered:
		delete(s.told, ep)
	}
	s.mu.Unlock()
	entry := s.send(ctx, j.sub, j.ev, key)
	s.mu.Lock()
	b := s.batches[j.sub.ID]
	if b == nil {
		b = &logBatch{}
		s.batches[j.sub.ID] = b
	}
	b.entries = append(b.entries, entry)
	if entry.Error == "" {
		b.sent = append(b.sent, sent{Key: key, Time: now})
	} else {
		s.dedup.remove(key)
	}
	s.mu.Unlock()
}

// send delivers ev to sub once (with retries) and returns its log entry;
// the entry's error and the log line carry no secret.
func (s *Sender) send(ctx context.Context, sub Subscription, ev Event, delivery string) LogEntry {
	entry := LogEntry{Time: s.o.Now().UTC(), Trigger: ev.Trigger, App: ev.App}
	r, err := s.request(ctx, sub, ev, delivery)
	if err != nil {
		entry.Error = err.Error()
	} else {
		res := deliver(ctx, s.client, s.o.Hosts, s.retry, r)
		entry.Status, entry.LatencyMS, entry.Attempts = res.Status, res.Latency.Milliseconds(), res.Attempts
		if res.Err != nil {
			entry.Error = res.Err.Error()
		}
	}
	attrs := []any{"subscription", sub.ID, "url", publicURL(sub.URL), "trigger", ev.Trigger, "app", ev.App,
		"status", entry.Status, "attempts", entry.Attempts, "latency_ms", entry.LatencyMS}
	if entry.Error != "" {
		s.o.Log.WarnContext(ctx, "notify: delivery failed", append(attrs, "err", entry.Error)...)
	} else {
		s.o.Log.InfoContext(ctx, "notify: delivered", attrs...)
	}
	return entry
}

// request builds what goes to sub's receiver: the payload, the URL with
// the Secret's part, the HMAC key for a webhook.
func (s *Sender) request(ctx context.Context, sub Subscription, ev Event, delivery string) (request, error) {
	r := request{publicURL: publicURL(sub.URL), delivery: delivery}
	if err := envconfig.CheckNotificationURL(sub.URL, s.o.Hosts); err != nil {
		return r, fmt.Errorf("notify: subscription %q url: %v", sub.ID, err)
	}
	// The key is checked again here, not only when the subscription was
	// saved: the ConfigMap may have been edited by hand, or the
	// declarations changed since.
	if err := s.store.CheckKey(sub); err != nil {
		var ke *KeyError
		if errors.As(err, &ke) {
			return r, fmt.Errorf("notify: subscription %q not sent: %s", sub.ID, ke.Message)
		}
		return r, err
	}
	body, err := Payload(sub.Provider, sub.ID, delivery, ev)
	if err != nil {
		return r, err
	}
	r.body, r.url = body, sub.URL
	if sub.SecretRef == nil {
		return r, nil
	}
	secret, err := s.readSecret(ctx, sub)
	if err != nil {
		return r, err
	}
	r.secret = secret
	if sub.Provider == envconfig.ProviderWebhook {
		if len(secret) < MinHMACKeyBytes {
			return r, fmt.Errorf("notify: subscription %q: the HMAC key in Secret %s key %s is shorter than %d bytes: store a random one (openssl rand -hex 32)", sub.ID, sub.SecretRef.Name, sub.SecretRef.Key, MinHMACKeyBytes)
		}
		r.key = []byte(secret)
		return r, nil
	}
	// The Secret holds the URL's secret part, appended verbatim; it may
	// not move the message to another host or scheme.
	full, err := url.Parse(sub.URL + secret)
	base, _ := url.Parse(sub.URL)
	if err != nil || full.Scheme != base.Scheme || full.Host != base.Host || full.User != nil || full.Fragment != "" {
		return r, fmt.Errorf("notify: subscription %q: the value of Secret %s key %s, appended to the URL, does not make a URL on host %s: store only the URL's secret path or query there", sub.ID, sub.SecretRef.Name, sub.SecretRef.Key, base.Host)
	}
	r.url = sub.URL + secret
	return r, nil
}

// readSecret returns the value of sub's Secret key, without surrounding
// white space (a file's trailing newline).
func (s *Sender) readSecret(ctx context.Context, sub Subscription) (string, error) {
	ref := sub.SecretRef
	where := fmt.Sprintf("Secret %s/%s key %s", s.o.Namespace, ref.Name, ref.Key)
	sec, err := s.kube.CoreV1().Secrets(s.o.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("notify: subscription %q: %s: no such Secret: create it in deploy-web's namespace", sub.ID, where)
	case err != nil:
		return "", fmt.Errorf("notify: subscription %q: read %s: %w", sub.ID, where, err)
	}
	v, ok := sec.Data[ref.Key]
	switch {
	case !ok || len(strings.TrimSpace(string(v))) == 0:
		return "", fmt.Errorf("notify: subscription %q: %s: no such key, or empty", sub.ID, where)
	case len(v) > maxSecretBytes:
		return "", fmt.Errorf("notify: subscription %q: %s: longer than %d bytes", sub.ID, where, maxSecretBytes)
	}
	secret := strings.TrimSpace(string(v))
	if strings.ContainsFunc(secret, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", fmt.Errorf("notify: subscription %q: %s: has control characters", sub.ID, where)
	}
	return secret, nil
}

// RedactedURL is a subscription URL as pages show it: scheme, host and
// the path's first segment, the rest elided ("https://hooks.slack.com/services/…"):
// a receiver's token may hide in a path or query even outside the Secret.
func RedactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(not a URL)"
	}
	out := u.Scheme + "://" + u.Host
	p := strings.TrimPrefix(u.EscapedPath(), "/")
	first, rest, _ := strings.Cut(p, "/")
	if first != "" {
		out += "/" + first
	}
	if rest != "" || u.RawQuery != "" {
		out += "/…"
	}
	return out
}

// publicURL is a subscription URL as logs show it: without query (a
// receiver's token may hide there even outside the Secret).
func publicURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(not a URL)"
	}
	u.RawQuery, u.ForceQuery, u.User, u.Fragment = "", false, nil, ""
	return u.String()
}

// flush writes the delivery logs gathered since the last flush: one write
// per subscription. A batch that cannot be written is kept for the next
// flush.
func (s *Sender) flush(ctx context.Context) {
	s.mu.Lock()
	batches := s.batches
	s.batches = map[string]*logBatch{}
	s.mu.Unlock()
	for id, b := range batches {
		err := s.store.appendLog(ctx, id, *b)
		if err == nil {
			continue
		}
		s.o.Log.WarnContext(ctx, "notify: write delivery log", "subscription", id, "err", err)
		s.mu.Lock()
		if cur := s.batches[id]; cur != nil {
			b.entries, b.sent = append(b.entries, cur.entries...), append(b.sent, cur.sent...)
		}
		b.entries = b.entries[max(0, len(b.entries)-LogEntries):]
		b.sent = b.sent[max(0, len(b.sent)-sentKeys):]
		s.batches[id] = b
		s.mu.Unlock()
	}
}

// SendTest sends a test message to the subscription id now, from any
// replica (a person asked for it), and writes its log entry at once.
func (s *Sender) SendTest(ctx context.Context, id string) (LogEntry, error) {
	sub, err := s.store.Get(ctx, id)
	if err != nil {
		return LogEntry{}, err
	}
	ev := Event{Trigger: TriggerTest, App: sub.Scope.App, Cluster: sub.Scope.Cluster, Namespace: sub.Scope.Namespace,
		Environment: sub.Scope.Environment, Message: "deploy-web can reach this receiver.", Time: s.o.Now().UTC()}
	entry := s.send(ctx, sub, ev, "test-"+dedupKey(sub.ID, Event{Trigger: TriggerTest, Time: ev.Time, Revision: ev.Time.String()}))
	if err := s.store.appendLog(ctx, id, logBatch{entries: []LogEntry{entry}}); err != nil {
		return entry, err
	}
	return entry, nil
}
