package kubeview

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// cursor tracks where a stream is, so that it can resume without repeating
// or losing lines: lines stamped before since are skipped, and so are the
// first skip lines stamped exactly since (already seen). last and seen are
// the newest timestamp emitted and how many lines carried it.
type cursor struct {
	since time.Time
	skip  int
	last  time.Time
	seen  int
	lines int
}

// resumeAt sets the cursor to resume after what was emitted.
func (c *cursor) resumeAt() {
	if !c.last.IsZero() {
		c.since, c.skip = c.last, c.seen
	}
}

// consume reads timestamped log lines from r (as GetLogs with Timestamps
// sends them) and emits each; it is the seam the tests feed directly. It
// returns nil at the end of r and when ctx ends (a canceled stream is a
// normal end); otherwise the read or emit error.
func consume(ctx context.Context, r io.Reader, c *cursor, emit func(LogLine) error) error {
	br := bufio.NewReaderSize(r, 32<<10)
	var long []byte // a line longer than the buffer, up to MaxLineBytes
	inLong, truncated := false, false
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !inLong {
				long, inLong = long[:0], true
			}
			truncated = truncated || len(long)+len(frag) > MaxLineBytes
			long = appendCapped(long, frag)
			continue
		}
		line := frag
		if inLong {
			body := bytes.TrimSuffix(frag, []byte("\n"))
			truncated = truncated || len(long)+len(body) > MaxLineBytes
			long = appendCapped(long, body)
			line = long
		}
		if len(line) > 0 {
			ln := parseLine(line)
			if truncated {
				ln.Line += TruncatedMark
			}
			if ln, ok := c.accept(ln); ok {
				if eerr := emit(ln); eerr != nil {
					return eerr
				}
			}
		}
		inLong, truncated = false, false
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// appendCapped appends b to dst, up to MaxLineBytes in all.
func appendCapped(dst, b []byte) []byte {
	room := MaxLineBytes - len(dst)
	if room <= 0 {
		return dst
	}
	return append(dst, b[:min(len(b), room)]...)
}

// accept applies the cursor to a line and records it.
func (c *cursor) accept(ln LogLine) (LogLine, bool) {
	if !ln.TS.IsZero() && !c.since.IsZero() {
		if ln.TS.Before(c.since) {
			return ln, false
		}
		if ln.TS.Equal(c.since) && c.skip > 0 {
			c.skip--
			return ln, false
		}
	}
	if !ln.TS.IsZero() {
		if ln.TS.Equal(c.last) {
			c.seen++
		} else {
			c.last, c.seen = ln.TS, 1
		}
	}
	c.lines++
	return ln, true
}

// parseLine splits "<RFC 3339 timestamp> <text>\n" into a LogLine. A line
// without a valid timestamp is kept whole. The text is made valid UTF-8
// (invalid bytes become U+FFFD) and loses its line ending.
func parseLine(b []byte) LogLine {
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	var ln LogLine
	if i := bytes.IndexByte(b, ' '); i > 0 && i < 40 {
		if ts, err := time.Parse(time.RFC3339Nano, string(b[:i])); err == nil {
			ln.TS, b = ts.UTC(), b[i+1:]
		}
	}
	if utf8.Valid(b) {
		ln.Line = string(b)
	} else {
		ln.Line = strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return ln
}
