// Package capread reads a file into memory only up to a cap, so no file
// named by a flag, a config or a repository can make a buffer unbounded.
package capread

import (
	"fmt"
	"io"
	"os"
)

// File reads at most max bytes of the file at path; a larger file is an
// error naming it and the cap.
func File(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return data, nil
}

// Reader reads at most max bytes of r; reading past them fails with the
// error over returns (each package names its own limit), once a byte past
// the cap is seen, so a stream of exactly max bytes reads whole.
type Reader struct {
	r        io.Reader
	left     int64
	tooLarge func() error
}

// NewReader returns a Reader of r capped at max bytes.
func NewReader(r io.Reader, max int64, tooLarge func() error) *Reader {
	return &Reader{r: r, left: max, tooLarge: tooLarge}
}

func (c *Reader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, c.tooLarge()
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// ReadCloser is a capped Reader that closes what it reads.
type ReadCloser struct {
	*Reader
	io.Closer
}

// NewReadCloser returns rc capped at max bytes.
func NewReadCloser(rc io.ReadCloser, max int64, tooLarge func() error) ReadCloser {
	return ReadCloser{NewReader(rc, max, tooLarge), rc}
}
