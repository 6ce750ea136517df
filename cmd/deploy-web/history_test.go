package main

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestHistoryNamespace(t *testing.T) {
	noFile := func(string) ([]byte, error) { return nil, fs.ErrNotExist }
	file := func(s string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if p != inClusterNamespaceFile {
				t.Errorf("read %s, want %s", p, inClusterNamespaceFile)
			}
			return []byte(s), nil
		}
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "POD_NAMESPACE" {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name    string
		flag    string
		getenv  func(string) string
		read    func(string) ([]byte, error)
		want    string
		wantErr string
	}{
		{"flag wins", "hist", env("pod-ns"), file("sa-ns"), "hist", ""},
		{"POD_NAMESPACE", "", env("pod-ns"), file("sa-ns"), "pod-ns", ""},
		{"in-cluster file", "", env(""), file("sa-ns\n"), "sa-ns", ""},
		{"outside a cluster, nothing set", "", env(""), noFile, "", "required outside a cluster"},
		{"unreadable file", "", env(""), func(string) ([]byte, error) { return nil, errors.New("EACCES") }, "", "EACCES"},
		{"not a namespace", "", env("Bad_NS"), noFile, "", `"Bad_NS" (from $POD_NAMESPACE) is not a namespace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := historyNamespace(tt.flag, tt.getenv, tt.read)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "--history-namespace: ") {
					t.Fatalf("historyNamespace = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("historyNamespace = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
