package insights

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
)

func TestWriteCSV(t *testing.T) {
	rep := Compute(input([]audit.Record{apply("dev-1", "dev", "c1", 2*time.Hour, api)}, nil))
	rep.Rows = append(rep.Rows, Row{Environment: "=HYPERLINK(\"x\")", App: "@cmd"})
	var b strings.Builder
	if err := WriteCSV(&b, rep); err != nil {
		t.Fatalf("WriteCSV: %v", err)
	}
	got, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	want := [][]string{csvHeader,
		{"dev", "", "", "", "1", "0.14", "1", "60", "60", "0", "0", "0", "0", "0", "0"},
		{"dev", "c1", "dev", "api", "1", "0.14", "1", "60", "60", "0", "0", "0", "0", "0", "0"},
		{"'=HYPERLINK(\"x\")", "", "", "'@cmd", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CSV mismatch (-want +got):\n%s", diff)
	}
}
