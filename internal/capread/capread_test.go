package capread

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		max     int64
		want    string
		wantErr string
	}{
		{5, "12345", ""},
		{100, "12345", ""},
		{4, "", path + " is larger than 4 bytes"},
		{0, "", "larger than 0 bytes"},
	}
	for _, tt := range tests {
		got, err := File(path, tt.max)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("File(max %d) = %q, %v; want an error containing %q", tt.max, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("File(max %d) = %q, %v; want %q", tt.max, got, err, tt.want)
		}
	}
	if _, err := File(filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("File(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestReader(t *testing.T) {
	errBig := errors.New("too large")
	tooLarge := func() error { return errBig }
	for _, tt := range []struct {
		in      string
		max     int64
		want    string
		wantErr error
	}{
		{"abc", 3, "abc", nil},
		{"abc", 5, "abc", nil},
		{"abcd", 3, "abc", errBig},
		{"", 0, "", nil},
		{"a", 0, "", errBig},
	} {
		got, err := io.ReadAll(NewReader(strings.NewReader(tt.in), tt.max, tooLarge))
		if string(got) != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("ReadAll(NewReader(%q, %d)) = %q, %v; want %q, %v", tt.in, tt.max, got, err, tt.want, tt.wantErr)
		}
	}
}
