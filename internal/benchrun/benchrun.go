// Package benchrun is what the benchmark commands (cmd/benchcluster,
// cmd/benchrestart) share: their main (a context that ends on SIGINT or
// SIGTERM, the error printed under the command's name), their working
// folder, and the replacement of their section of BENCHMARKS.md.
package benchrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Main runs run with the command's arguments and standard output, on a
// context that ends at SIGINT or SIGTERM, and exits 1 printing
// "name: err" when it fails.
func Main(name string, run func(ctx context.Context, args []string, stdout io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// WorkDir is dir, or (dir empty) a new temporary folder named after
// pattern (os.MkdirTemp) that cleanup removes; cleanup is never nil.
func WorkDir(dir, pattern string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	d, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", nil, fmt.Errorf("benchrun: %w", err)
	}
	return d, func() { os.RemoveAll(d) }, nil
}

// Section is a command's section of a Markdown file: the text between
// its Start and End markers (each marker included), placed at the end of
// the file under Heading (none when empty) the first time.
type Section struct {
	Start, End string
	Heading    string
}

// Replace puts text (which begins with s.Start and ends with s.End and a
// line break) in place of s in the file at path, or at the file's end
// under s.Heading when the file has no such section.
func (s Section) Replace(path, text string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("benchrun: %w", err)
	}
	doc := string(b)
	i, j := strings.Index(doc, s.Start), strings.Index(doc, s.End)
	if i >= 0 && j > i {
		doc = doc[:i] + strings.TrimSuffix(text, "\n") + doc[j+len(s.End):]
	} else {
		doc = strings.TrimRight(doc, "\n") + "\n\n"
		if s.Heading != "" {
			doc += s.Heading + "\n\n"
		}
		doc += text
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}
