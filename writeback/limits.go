package writeback

import (
	"time"

	"github.com/hanzoai/deploy-web/internal/limit"
)

// Limits bound one Commit; zero fields take the defaults.
type Limits struct {
	// Timeout bounds the whole Commit: fetches, edits and pushes
	// (default DefaultTimeout).
	Timeout time.Duration
	// MaxPackBytes caps each fetched pack and every HTTP answer, counted
	// on the wire (default DefaultMaxPackBytes).
	MaxPackBytes int64
	// MaxInflatedBytes caps what the objects of a fetched pack inflate
	// to, in all, checked from the pack's headers before any object is
	// unpacked (default DefaultMaxInflatedBytes).
	MaxInflatedBytes int64
	// MaxFileBytes caps a file read by an edit or by Locate, inflated
	// (default DefaultMaxFileBytes).
	MaxFileBytes int64
}

// Defaults of Limits.
const (
	DefaultTimeout      = time.Minute
	DefaultMaxPackBytes = 64 << 20
	DefaultMaxFileBytes = 4 << 20
	// DefaultMaxInflatedBytes is four times DefaultMaxPackBytes: manifests
	// compress well, a pack that inflates more is a bomb.
	DefaultMaxInflatedBytes = 256 << 20
)

func (l Limits) timeout() time.Duration { return limit.Or(l.Timeout, DefaultTimeout) }

func (l Limits) maxPackBytes() int64 { return limit.Or(l.MaxPackBytes, DefaultMaxPackBytes) }

func (l Limits) maxFileBytes() int64 { return limit.Or(l.MaxFileBytes, DefaultMaxFileBytes) }

func (l Limits) maxInflatedBytes() int64 {
	return limit.Or(l.MaxInflatedBytes, DefaultMaxInflatedBytes)
}
