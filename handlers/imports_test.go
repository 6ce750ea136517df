package handlers

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHandlersReachWorkflowsThroughTheService: the git workflows (write-
// back, promotion) live in package gitops, which the handlers call; no
// handler imports them directly (shared/DESIGN.md, Layout).
func TestHandlersReachWorkflowsThroughTheService(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"github.com/hanzoai/deploy-web/writeback", "github.com/hanzoai/deploy-web/promotion"}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if p == bad {
					t.Errorf("%s imports %s: call it through gitops", f, p)
				}
			}
		}
	}
}
