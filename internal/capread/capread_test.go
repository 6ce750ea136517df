package capread

import (
	"errors"
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
