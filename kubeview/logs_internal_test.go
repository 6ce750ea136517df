package kubeview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hanzoai/deploy-web/appcr"
)

var logT0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func cri(ts time.Time, text string) string { return ts.Format(time.RFC3339Nano) + " " + text + "\n" }

func TestParseLine(t *testing.T) {
	tests := []struct {
		in   string
		want LogLine
	}{
		{"2026-05-04T10:00:00.123456789Z hello world\n", LogLine{TS: logT0.Add(123456789), Line: "hello world"}},
		{"2026-05-04T10:00:00Z crlf\r\n", LogLine{TS: logT0, Line: "crlf"}},
		{"2026-05-04T12:00:00+02:00 zoned\n", LogLine{TS: logT0, Line: "zoned"}},
		{"no timestamp here\n", LogLine{Line: "no timestamp here"}},
		{"2026-05-04T10:00:00Z \n", LogLine{TS: logT0, Line: ""}},
		// Hostile text stays text: framing and escaping are the writers' job.
		{"2026-05-04T10:00:00Z event: y\n", LogLine{TS: logT0, Line: "event: y"}},
		{"2026-05-04T10:00:00Z <script>alert(1)</script>\n", LogLine{TS: logT0, Line: "<script>alert(1)</script>"}},
		{"2026-05-04T10:00:00Z bad \xff\xfe utf8\n", LogLine{TS: logT0, Line: "bad \uFFFD utf8"}},
		{"2026-05-04T10:00:00Z cut \xe2\x82\n", LogLine{TS: logT0, Line: "cut \uFFFD"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := parseLine([]byte(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseLine(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// collect feeds r through consume and returns the lines.
func collect(t *testing.T, r io.Reader, c *cursor) ([]LogLine, error) {
	t.Helper()
	var got []LogLine
	err := consume(context.Background(), r, c, func(ln LogLine) error {
		got = append(got, ln)
		return nil
	})
	return got, err
}

func TestConsume(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes+1000)
	tests := []struct {
		name  string
		in    string
		since cursor
		want  []string
	}{
		{"lines", cri(logT0, "a") + cri(logT0.Add(time.Second), "b"), cursor{}, []string{"a", "b"}},
		{"last line without newline", cri(logT0, "a") + strings.TrimSuffix(cri(logT0, "b"), "\n"), cursor{}, []string{"a", "b"}},
		// "\n\ndata: x" in a container's output is three lines for the
		// kubelet; the empty line keeps its timestamp.
		{"injection attempt is just lines", cri(logT0, "") + cri(logT0, "") + cri(logT0, "data: x"), cursor{}, []string{"", "", "data: x"}},
		{"long line truncated", cri(logT0, long) + cri(logT0, "next"), cursor{}, []string{long[:MaxLineBytes-len(logT0.Format(time.RFC3339Nano))-1] + TruncatedMark, "next"}},
		{"line just over the buffer", cri(logT0, strings.Repeat("y", 40000)), cursor{}, []string{strings.Repeat("y", 40000)}},
		{"resume skips older and seen lines",
			cri(logT0, "old") + cri(logT0.Add(time.Second), "seen1") + cri(logT0.Add(time.Second), "seen2") + cri(logT0.Add(time.Second), "new-same-ts") + cri(logT0.Add(2*time.Second), "newer"),
			cursor{since: logT0.Add(time.Second), skip: 2}, []string{"new-same-ts", "newer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.since
			lines, err := collect(t, iotest.HalfReader(strings.NewReader(tt.in)), &c)
			if err != nil {
				t.Fatalf("consume() error = %v", err)
			}
			var got []string
			for _, l := range lines {
				got = append(got, l.Line)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("consume(%.60q) lines (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestConsumeCursor(t *testing.T) {
	var c cursor
	in := cri(logT0, "a") + cri(logT0.Add(time.Second), "b") + cri(logT0.Add(time.Second), "c")
	if _, err := collect(t, strings.NewReader(in), &c); err != nil {
		t.Fatal(err)
	}
	if !c.last.Equal(logT0.Add(time.Second)) || c.seen != 2 || c.lines != 3 {
		t.Errorf("cursor after 3 lines = last %v seen %d lines %d, want last %v seen 2 lines 3", c.last, c.seen, c.lines, logT0.Add(time.Second))
	}
	c.resumeAt()
	// Reopened with since truncated to the second, as the apiserver does.
	again := in + cri(logT0.Add(time.Second), "d") + cri(logT0.Add(3*time.Second), "e")
	lines, _ := collect(t, strings.NewReader(again), &c)
	var got []string
	for _, l := range lines {
		got = append(got, l.Line)
	}
	if diff := cmp.Diff([]string{"d", "e"}, got); diff != "" {
		t.Errorf("resumed lines (-want +got):\n%s", diff)
	}
}

func TestConsumeEnds(t *testing.T) {
	// A canceled stream is a normal end.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := consume(ctx, iotest.ErrReader(context.Canceled), &cursor{}, func(LogLine) error { return nil })
	if err != nil {
		t.Errorf("consume(canceled) = %v, want nil", err)
	}
	// A broken stream is an error.
	boom := errors.New("connection reset")
	err = consume(context.Background(), io.MultiReader(strings.NewReader(cri(logT0, "a")), iotest.ErrReader(boom)), &cursor{}, func(LogLine) error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("consume(broken) = %v, want %v", err, boom)
	}
	// The emitter's error stops the read.
	stop := errors.New("client gone")
	n := 0
	err = consume(context.Background(), strings.NewReader(cri(logT0, "a")+cri(logT0, "b")), &cursor{}, func(LogLine) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("consume(emit fails) = %v after %d lines, want %v after 1", err, n, stop)
	}
}

func testPod(name string, created time.Time, phase corev1.PodPhase, containers ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{appcr.InstanceLabel: "web"}},
		Status: corev1.PodStatus{Phase: phase},
	}
	if len(containers) == 0 {
		containers = []string{"web"}
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c})
	}
	return p
}

func terminating(p *corev1.Pod) *corev1.Pod {
	now := metav1.NewTime(logT0)
	p.DeletionTimestamp = &now
	return p
}

func TestChoosePod(t *testing.T) {
	old := testPod("web-old", logT0, corev1.PodRunning)
	newer := testPod("web-new", logT0.Add(time.Minute), corev1.PodRunning)
	pending := testPod("web-pending", logT0.Add(2*time.Minute), corev1.PodPending)
	leaving := terminating(testPod("web-leaving", logT0.Add(3*time.Minute), corev1.PodRunning))
	tests := []struct {
		name       string
		pods       []*corev1.Pod
		want       string
		wantPod    string
		wantReason string
		wantErr    error
	}{
		{"newest running", []*corev1.Pod{old, newer, pending, leaving}, "", "web-new", "", nil},
		{"named", []*corev1.Pod{old, newer}, "web-old", "web-old", "", nil},
		{"named pending", []*corev1.Pod{old, pending}, "web-pending", "web-pending", "", nil},
		{"named not the app's", []*corev1.Pod{old}, "db-0", "", "", ErrPodNotInApp},
		{"no pods", nil, "", "", "the app has no pods", nil},
		{"none running", []*corev1.Pod{pending, leaving}, "", "", "the app has no running pod (1 Pending, 1 Terminating): choose a pod to read its logs", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, reason, err := choosePod(tt.pods, tt.want)
			got := ""
			if p != nil {
				got = p.Name
			}
			if got != tt.wantPod || reason != tt.wantReason || !errors.Is(err, tt.wantErr) {
				t.Errorf("choosePod(%q) = %q, %q, %v, want %q, %q, %v", tt.want, got, reason, err, tt.wantPod, tt.wantReason, tt.wantErr)
			}
		})
	}
}

func TestChooseContainer(t *testing.T) {
	annotated := testPod("p", logT0, corev1.PodRunning, "proxy", "web", "debug")
	annotated.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "debug"}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		want    string
		got     string
		wantErr error
	}{
		{"named after the app", testPod("p", logT0, corev1.PodRunning, "proxy", "web"), "", "web", nil},
		{"first", testPod("p", logT0, corev1.PodRunning, "proxy", "sidecar"), "", "proxy", nil},
		{"annotation", annotated, "", "debug", nil},
		{"chosen", annotated, "proxy", "proxy", nil},
		{"not in pod", annotated, "db", "", ErrContainerNotInPod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chooseContainer(tt.pod, "web", tt.want)
			if got != tt.got || !errors.Is(err, tt.wantErr) {
				t.Errorf("chooseContainer(%q) = %q, %v, want %q, %v", tt.want, got, err, tt.got, tt.wantErr)
			}
		})
	}
}

// fakePods is a podSource whose pods the test changes.
type fakePods struct {
	mu     sync.Mutex
	pods   []*corev1.Pod
	status Status
}

func (f *fakePods) appPods(ns, app string) []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*corev1.Pod
	for _, p := range f.pods {
		if p.Namespace == ns && p.Labels[appcr.InstanceLabel] == app {
			out = append(out, p)
		}
	}
	return out
}

func (f *fakePods) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}

func (f *fakePods) set(pods ...*corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = pods
}

func TestRead(t *testing.T) {
	var lines strings.Builder
	for i := range 30 {
		lines.WriteString(cri(logT0.Add(time.Duration(i)*time.Second), fmt.Sprintf("line %d", i)))
	}
	body := lines.String()
	tests := []struct {
		name       string
		pods       []*corev1.Pod
		unreach    bool
		openErr    error
		q          LogQuery
		wantLines  int
		wantReason string
		wantErr    error
		wantOpts   func(*corev1.PodLogOptions) string
	}{
		{name: "tail", pods: []*corev1.Pod{testPod("web-1", logT0, corev1.PodRunning)}, q: LogQuery{Tail: 5}, wantLines: 5,
			wantOpts: func(o *corev1.PodLogOptions) string {
				if *o.TailLines != 5 || !o.Timestamps || o.Follow || o.Container != "web" {
					return fmt.Sprintf("opts = %+v, want tail 5, timestamps, no follow, container web", o)
				}
				return ""
			}},
		{name: "tail capped", pods: []*corev1.Pod{testPod("web-1", logT0, corev1.PodRunning)}, q: LogQuery{Tail: 50000}, wantLines: 30,
			wantOpts: func(o *corev1.PodLogOptions) string {
				if *o.TailLines != MaxTail {
					return fmt.Sprintf("tail = %d, want %d", *o.TailLines, MaxTail)
				}
				return ""
			}},
		{name: "since", pods: []*corev1.Pod{testPod("web-1", logT0, corev1.PodRunning)}, q: LogQuery{Since: 90 * time.Second, Previous: true}, wantLines: 30,
			wantOpts: func(o *corev1.PodLogOptions) string {
				if o.SinceSeconds == nil || *o.SinceSeconds != 90 || !o.Previous {
					return fmt.Sprintf("opts = %+v, want since 90s, previous", o)
				}
				return ""
			}},
		{name: "no pods", q: LogQuery{}, wantReason: "the app has no pods"},
		{name: "unreachable", pods: []*corev1.Pod{testPod("web-1", logT0, corev1.PodRunning)}, unreach: true,
			wantReason: "the cluster is not reachable: the Kubernetes API server is not answering"},
		{name: "pod gone", pods: []*corev1.Pod{testPod("web-1", logT0, corev1.PodRunning)},
			openErr: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web-1"), wantReason: "pod web-1 no longer exists"},
		{name: "container waiting", pods: []*corev1.Pod{testPod("web-1", logT0, corev1.PodRunning)},
			openErr:    apierrors.NewBadRequest(`container "web" in pod "web-1" is waiting to start: ContainerCreating`),
			wantReason: `the cluster says: container "web" in pod "web-1" is waiting to start: ContainerCreating`},
		{name: "transport error hidden", pods: []*corev1.Pod{testPod("web-1", logT0, corev1.PodRunning)},
			openErr: errors.New(`Get "https://10.0.0.1:6443/api/v1/...?token=s3cret": x509`), wantReason: "the cluster refused the log request for container web"},
		{name: "pod not the app's", pods: []*corev1.Pod{testPod("web-1", logT0, corev1.PodRunning)}, q: LogQuery{Pod: "kube-apiserver"}, wantErr: ErrPodNotInApp},
		{name: "container not in pod", pods: []*corev1.Pod{testPod("web-1", logT0, corev1.PodRunning)}, q: LogQuery{Container: "db"}, wantErr: ErrContainerNotInPod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakePods{pods: tt.pods, status: Status{Reachable: !tt.unreach, Error: "the Kubernetes API server is not answering"}}
			var optsProblem string
			l := &Logs{src: src, poll: 10 * time.Millisecond, readTimeout: time.Second,
				open: func(ctx context.Context, ns, pod string, o *corev1.PodLogOptions) (io.ReadCloser, error) {
					if tt.openErr != nil {
						return nil, tt.openErr
					}
					if tt.wantOpts != nil {
						optsProblem = tt.wantOpts(o)
					}
					return io.NopCloser(strings.NewReader(body)), nil
				}}
			q := tt.q
			q.Namespace, q.App = "shop", "web"
			res, err := l.Read(context.Background(), q)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Read() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if len(res.Lines) != tt.wantLines || res.Reason != tt.wantReason {
				t.Errorf("Read() = %d lines, reason %q, want %d lines, reason %q", len(res.Lines), res.Reason, tt.wantLines, tt.wantReason)
			}
			if res.Lines == nil {
				t.Errorf("Read().Lines = nil, want an empty list")
			}
			if optsProblem != "" {
				t.Error(optsProblem)
			}
			if tt.wantLines > 0 && res.Lines[len(res.Lines)-1].Line != "line 29" {
				t.Errorf("last line = %q, want the newest, line 29", res.Lines[len(res.Lines)-1].Line)
			}
		})
	}
}

// fakeStreams serves each pod's log as a growing pipe the test writes to.
type fakeStreams struct {
	mu     sync.Mutex
	pipes  map[string]*io.PipeWriter
	opened chan string
	opts   map[string][]*corev1.PodLogOptions
	// history is each pod's whole log; a reopen replays what matches.
	history map[string][]string
}

func newFakeStreams() *fakeStreams {
	return &fakeStreams{pipes: map[string]*io.PipeWriter{}, opened: make(chan string, 16), opts: map[string][]*corev1.PodLogOptions{}, history: map[string][]string{}}
}

func (s *fakeStreams) open(ctx context.Context, ns, pod string, o *corev1.PodLogOptions) (io.ReadCloser, error) {
	pr, pw := io.Pipe()
	s.mu.Lock()
	s.pipes[pod] = pw
	s.opts[pod] = append(s.opts[pod], o)
	var replay []string
	for _, l := range s.history[pod] {
		ts, _ := time.Parse(time.RFC3339Nano, strings.SplitN(l, " ", 2)[0])
		// The apiserver keeps whole seconds of sinceTime.
		if o.SinceTime == nil || !ts.Before(o.SinceTime.Truncate(time.Second)) {
			replay = append(replay, l)
		}
	}
	s.mu.Unlock()
	go func() {
		for _, l := range replay {
			if _, err := io.WriteString(pw, l); err != nil {
				return
			}
		}
	}()
	context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	s.opened <- pod
	return pr, nil
}

func (s *fakeStreams) write(t *testing.T, pod, line string) {
	t.Helper()
	s.mu.Lock()
	s.history[pod] = append(s.history[pod], line)
	pw := s.pipes[pod]
	s.mu.Unlock()
	if _, err := io.WriteString(pw, line); err != nil {
		t.Fatalf("write to %s: %v", pod, err)
	}
}

func (s *fakeStreams) end(pod string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pipes[pod].Close()
}

// events collects a follow stream's events.
type events struct {
	mu  sync.Mutex
	evs []string
	ch  chan struct{}
}

func (e *events) emit(ev LogEvent) error {
	e.mu.Lock()
	if ev.Status != nil {
		e.evs = append(e.evs, ev.Status.Status+": "+ev.Status.Message)
	} else {
		e.evs = append(e.evs, ev.Line.Line)
	}
	e.mu.Unlock()
	select {
	case e.ch <- struct{}{}:
	default:
	}
	return nil
}

func (e *events) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		e.mu.Lock()
		for _, ev := range e.evs {
			if ev == want {
				e.mu.Unlock()
				return
			}
		}
		e.mu.Unlock()
		select {
		case <-e.ch:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no event %q in %q", want, e.all())
		}
	}
}

func (e *events) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.evs...)
}

// TestFollowRollout follows the newest pod through a rollout: the old pod
// is deleted, the stream says so and resumes on the new pod; a container
// restart reopens the stream without repeating a line.
func TestFollowRollout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	src := &fakePods{status: Status{Reachable: true}}
	a := testPod("web-a", logT0, corev1.PodRunning)
	src.set(a)
	fs := newFakeStreams()
	l := &Logs{src: src, open: fs.open, poll: 10 * time.Millisecond, readTimeout: time.Second}
	ev := &events{ch: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Follow(ctx, LogQuery{Namespace: "shop", App: "web"}, ev.emit) }()

	<-fs.opened
	fs.write(t, "web-a", cri(logT0.Add(time.Second), "a1"))
	fs.write(t, "web-a", cri(logT0.Add(time.Second), "a2"))
	ev.waitFor(t, "a2")

	// The container restarts: the kubelet ends the stream; the pod stays.
	restarted := a.DeepCopy()
	restarted.Status.ContainerStatuses[0].RestartCount = 1
	src.set(restarted)
	fs.end("web-a")
	<-fs.opened
	fs.write(t, "web-a", cri(logT0.Add(2*time.Second), "a3"))
	ev.waitFor(t, "a3")

	// A rollout: b runs, a is deleted.
	b := testPod("web-b", logT0.Add(time.Minute), corev1.PodRunning)
	src.set(b)
	<-fs.opened
	fs.write(t, "web-b", cri(logT0.Add(time.Minute+time.Second), "b1"))
	ev.waitFor(t, "b1")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow() = %v, want nil after cancel", err)
	}
	want := []string{
		"streaming: following pod web-a, container web",
		"a1", "a2",
		"resumed: container web restarted (restart 1): resumed",
		"a3",
		"ended: pod web-a ended (deleted)",
		"resumed: resumed on pod web-b (replaced web-a)",
		"b1",
	}
	if diff := cmp.Diff(want, ev.all()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if o := fs.opts["web-a"][1]; o.SinceTime == nil || !o.SinceTime.Time.Equal(logT0.Add(time.Second)) || !o.Follow {
		t.Errorf("reopen options = %+v, want follow since %v", o, logT0.Add(time.Second))
	}
}

// TestFollowPinned follows a chosen pod until it fails: the stream is over.
func TestFollowPinned(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	src := &fakePods{status: Status{Reachable: true}}
	a := testPod("web-a", logT0, corev1.PodRunning)
	newer := testPod("web-b", logT0.Add(time.Minute), corev1.PodRunning)
	src.set(a, newer)
	fs := newFakeStreams()
	l := &Logs{src: src, open: fs.open, poll: 10 * time.Millisecond, readTimeout: time.Second}
	ev := &events{ch: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		done <- l.Follow(context.Background(), LogQuery{Namespace: "shop", App: "web", Pod: "web-a"}, ev.emit)
	}()
	if got := <-fs.opened; got != "web-a" {
		t.Fatalf("opened %s, want the chosen web-a", got)
	}
	fs.write(t, "web-a", cri(logT0.Add(time.Second), "a1"))
	ev.waitFor(t, "a1")
	failed := a.DeepCopy()
	failed.Status.Phase = corev1.PodFailed
	src.set(failed, newer)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Follow() = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Follow of a failed pod did not end")
	}
	want := []string{"streaming: following pod web-a, container web", "a1", "ended: pod web-a ended (Failed)", "done: pod web-a ended: the stream is over"}
	if diff := cmp.Diff(want, ev.all()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestFollowWaits reports an app without pods honestly and starts reading
// when a pod appears.
func TestFollowWaits(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	src := &fakePods{status: Status{Reachable: true}}
	fs := newFakeStreams()
	l := &Logs{src: src, open: fs.open, poll: 10 * time.Millisecond, readTimeout: time.Second}
	ev := &events{ch: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Follow(ctx, LogQuery{Namespace: "shop", App: "web"}, ev.emit) }()
	ev.waitFor(t, "waiting: the app has no pods; waiting for a running pod")
	src.set(testPod("web-a", logT0, corev1.PodRunning))
	<-fs.opened
	fs.write(t, "web-a", cri(logT0, "hello"))
	ev.waitFor(t, "hello")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow() = %v", err)
	}
}
