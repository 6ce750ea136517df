package deployplan

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// InterruptedError is the error of an apply that ApplyOptions.Interrupt
// stopped: between two writes, or while it waited for health. The report
// returned with it (nil when nothing was locked or written yet) says what
// was written: each object's Result, "skipped" for those not reached.
type InterruptedError struct {
	// Written counts the objects applied before the stop.
	Written int
}

func (e *InterruptedError) Error() string {
	if e.Written == 0 {
		return "deployplan: the apply was interrupted (the process is stopping) before it wrote any object"
	}
	return fmt.Sprintf("deployplan: the apply was interrupted (the process is stopping) after %d object(s) were written; the report names them", e.Written)
}

// interrupted reports whether opts.Interrupt ended.
func (opts ApplyOptions) interrupted() bool {
	return opts.Interrupt != nil && opts.Interrupt.Err() != nil
}

// interruptDone is opts.Interrupt's Done channel (nil, never ready,
// without one).
func (opts ApplyOptions) interruptDone() <-chan struct{} {
	if opts.Interrupt == nil {
		return nil
	}
	return opts.Interrupt.Done()
}

// withInterrupt is ctx, also cancelled when opts.Interrupt ends: for the
// reads before the lock (render, plan), which an interruption may cut.
func withInterrupt(ctx context.Context, opts ApplyOptions) (context.Context, context.CancelFunc) {
	ictx, cancel := context.WithCancel(ctx)
	if opts.Interrupt == nil {
		return ictx, cancel
	}
	stop := context.AfterFunc(opts.Interrupt, cancel)
	return ictx, func() { stop(); cancel() }
}

// interruptedSummary is the conclusion of an apply interrupted with its
// objects' results as they are: those not reached are marked skipped.
func (ps *planState) interruptedSummary(where string) (string, int) {
	d := &ps.report.DeployApply
	counts := map[string]int{}
	written := 0
	for i := range d.Objects {
		o := &d.Objects[i]
		switch o.Result {
		case "created", "configured", "unchanged", "replaced":
			written++
		case "":
			o.Result, o.Message = "skipped", "not applied: the apply was interrupted"
		}
		counts[o.Result]++
	}
	var parts []string
	for _, r := range []string{"created", "configured", "unchanged", "replaced", "failed", "skipped"} {
		if counts[r] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[r], r))
		}
	}
	return fmt.Sprintf("interrupted %s (the process is stopping): %d of %d object(s) written (%s); the objects already applied are in the report",
		where, written, len(d.Objects), strings.Join(parts, ", ")), written
}

// errInterrupted is what guard says once Interrupt ended.
var errInterrupted = errors.New("deployplan: interrupted")
