package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/devcluster"
)

// maxLogBytes bounds each demo log file, so a demo left running for days
// does not fill the disk.
const maxLogBytes = 64 << 20

// logFiles creates one log file per App (the container is named after the
// App), filled with some history, and returns KWOK's log sources.
func logFiles(dir string, apps []seedApp, now time.Time) ([]devcluster.LogSource, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	var srcs []devcluster.LogSource
	for _, a := range apps {
		path := filepath.Join(dir, a.name+".log")
		g := newLogGen(a)
		var b strings.Builder
		start := now.Add(-10 * time.Minute)
		for t := start; t.Before(now); t = t.Add(time.Duration(800+g.rnd.IntN(2400)) * time.Millisecond) {
			for _, l := range g.next(t) {
				b.WriteString(l)
			}
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		srcs = append(srcs, devcluster.LogSource{Containers: []string{a.name}, File: path, Follow: true})
	}
	return srcs, nil
}

// appendLogs keeps the demo's logs growing until ctx ends.
func appendLogs(ctx context.Context, dir string, apps []seedApp) {
	type writer struct {
		gen  *logGen
		path string
		next time.Time
	}
	now := time.Now()
	ws := make([]*writer, len(apps))
	for i, a := range apps {
		ws[i] = &writer{gen: newLogGen(a), path: filepath.Join(dir, a.name+".log"), next: now}
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now = <-t.C:
		}
		for _, w := range ws {
			if now.Before(w.next) {
				continue
			}
			w.next = now.Add(time.Duration(400+w.gen.rnd.IntN(1800)) * time.Millisecond)
			if st, err := os.Stat(w.path); err != nil || st.Size() > maxLogBytes {
				continue
			}
			f, err := os.OpenFile(w.path, os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				continue
			}
			for _, l := range w.gen.next(now) {
				_, _ = f.WriteString(l)
			}
			f.Close()
		}
	}
}

// logGen produces believable log lines for one App.
type logGen struct {
	app  seedApp
	rnd  *rand.Rand
	tick int
}

func newLogGen(a seedApp) *logGen {
	var seed uint64
	for _, c := range a.name {
		seed = seed*31 + uint64(c)
	}
	return &logGen{app: a, rnd: rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))}
}

func (g *logGen) next(t time.Time) []string {
	g.tick++
	line := func(stream, s string) string { return devcluster.CRILine(t, stream, s) }
	switch g.app.logs {
	case "crash":
		if g.tick%12 == 0 {
			return []string{
				line("stderr", `panic: runtime error: invalid memory address or nil pointer dereference`),
				line("stderr", `[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x7a3c21]`),
				line("stderr", ``),
				line("stderr", `goroutine 1 [running]:`),
				line("stderr", `main.(*PaymentClient).Authorize(0x0, {0xc000126000, 0x24})`),
				line("stderr", `	/src/`+g.app.name+`/payment.go:88 +0x21`),
				line("stderr", `main.main()`),
				line("stderr", `	/src/`+g.app.name+`/main.go:41 +0x1c5`),
			}
		}
		if g.tick%12 == 1 {
			return []string{line("stdout", fmt.Sprintf(`level=info msg="starting %s" version=%s`, g.app.name, g.version()))}
		}
		return []string{line("stdout", fmt.Sprintf(`level=info msg="loading config" source=env keys=%d`, 10+g.rnd.IntN(5)))}
	case "worker":
		n := 10 + g.rnd.IntN(300)
		if g.rnd.IntN(25) == 0 {
			return []string{line("stderr", fmt.Sprintf(`level=warn msg="retrying batch" batch=%d attempt=2 err="context deadline exceeded"`, 4000+g.tick))}
		}
		return []string{line("stdout", fmt.Sprintf(`level=info msg="processed batch" batch=%d items=%d duration_ms=%d lag=%d`, 4000+g.tick, n, 20+g.rnd.IntN(400), g.rnd.IntN(40)))}
	default:
		paths := []string{"/api/v1/products", "/api/v1/cart", "/healthz", "/api/v1/orders", "/static/app.js", "/api/v1/search?q=shoes", "/api/v1/session"}
		p := paths[g.rnd.IntN(len(paths))]
		status, level, stream := 200, "info", "stdout"
		switch r := g.rnd.IntN(40); {
		case r == 0:
			status, level, stream = 503, "error", "stderr"
		case r < 3:
			status, level = 404, "warn"
		case r < 5:
			status = 304
		}
		return []string{line(stream, fmt.Sprintf(`level=%s msg="http request" method=GET path=%s status=%d duration_ms=%.1f bytes=%d remote=10.42.%d.%d request_id=%08x`,
			level, p, status, 0.5+g.rnd.Float64()*80, 200+g.rnd.IntN(9000), g.rnd.IntN(8), 2+g.rnd.IntN(250), g.rnd.Uint32()))}
	}
}

func (g *logGen) version() string {
	if n := len(g.app.releases); n > 0 {
		if img, ok := g.app.releases[n-1].spec["image"].(string); ok {
			if i := strings.LastIndex(img, ":"); i >= 0 {
				return img[i+1:]
			}
		}
	}
	return "unknown"
}
