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
