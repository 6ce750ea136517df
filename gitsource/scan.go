package gitsource

import (
	"errors"
	"io"
	"math"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// ScanPack reads a pack stream to its end, inflating every object into a
// counter (nothing is kept), and fails with a *TooLargeError of c once
// the objects inflate to more than c.Max bytes: a whole object counts what it
// inflates to (at least what its header says), a delta its instructions
// and the size of the object it makes. go-git resolves deltas in memory
// when it indexes the pack, so only a pack within c.Max is indexed.
func ScanPack(r io.Reader, c Cap) error {
	limit := c.Max
	s := packfile.NewScanner(r)
	_, n, err := s.Header()
	if err != nil {
		return err
	}
	// total stays within [0, limit]: every amount is compared with what
	// is left before it is added, so sizes a header declares (up to 2^60
	// for an object, 2^63-1 for a delta's result) cannot wrap it.
	var total int64
	over := func(n int64) error {
		return c.over(satAdd(total, n), "bytes inflated")
	}
	for range n {
		oh, err := s.NextObjectHeader()
		if err != nil {
			return err
		}
		delta := oh.Type == plumbing.OFSDeltaObject || oh.Type == plumbing.REFDeltaObject
		if oh.Length < 0 || oh.Length > limit-total {
			return over(oh.Length)
		}
		w := &inflateCounter{left: limit - total}
		if _, _, err := s.NextObject(w); err != nil {
			if errors.Is(err, errInflateCap) {
				return over(w.n)
			}
			return err
		}
		total += max(w.n, oh.Length) // both within limit - total
		if delta {
			size, ok := deltaTargetSize(w.head)
			if !ok {
				return errors.New("a delta without its sizes")
			}
			if size > limit-total {
				return over(size)
			}
			total += size
		}
	}
	if _, err := s.Checksum(); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, r) // the rest, for the copy on disk
	return err
}

// satAdd adds two counts that are not negative, stopping at the
// largest int64 instead of wrapping.
func satAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// errInflateCap stops inflating an object over the cap.
var errInflateCap = errors.New("over the inflate cap")

// inflateCounter counts what an object inflates to, keeping its first
// bytes (a delta's header); it fails past left bytes.
type inflateCounter struct {
	n, left int64
	head    []byte
}

func (c *inflateCounter) Write(p []byte) (int, error) {
	if len(c.head) < 32 {
		c.head = append(c.head, p[:min(len(p), 32-len(c.head))]...)
	}
	c.n += int64(len(p))
	if c.n > c.left {
		return 0, errInflateCap
	}
	return len(p), nil
}

// deltaTargetSize reads the size of the object a delta makes: a delta
// starts with the source's size and the target's, each a little-endian
// base-128 number.
func deltaTargetSize(b []byte) (int64, bool) {
	_, rest, ok := uvarint128(b)
	if !ok {
		return 0, false
	}
	size, _, ok := uvarint128(rest)
	return size, ok
}

// uvarint128 reads one little-endian base-128 number off b.
func uvarint128(b []byte) (n int64, rest []byte, ok bool) {
	for shift := uint(0); len(b) > 0 && shift <= 56; shift += 7 {
		c := b[0]
		b = b[1:]
		n |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			return n, b, true
		}
	}
	return 0, nil, false
}
