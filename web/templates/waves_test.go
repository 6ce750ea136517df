package templates

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/deployplan"
)

// TestWaveTable: the report panel's waves table has a row per wave, in
// order, with its objects, the workloads it waits for and its result
// with the message naming the object, and for an App that depends on
// others, the App and the Apps it waits for; names from the cluster come back
// escaped.
func TestWaveTable(t *testing.T) {
	waves := []deployplan.WavePlan{
		{Wave: 0, Objects: []string{"ConfigMap/db", "Deployment/db"}, Workloads: []string{"Deployment/db"}, Result: deployplan.WaveUnhealthy, Message: "not healthy after 5s: Deployment/db is Progressing"},
		{Wave: 1, Objects: []string{"ConfigMap/<script>x</script>"}, Workloads: []string{}, Result: deployplan.WaveNotStarted, Message: "wave 0 did not get healthy"},
		{Wave: 0, Hook: "post", Objects: []string{"Job/notify"}, Workloads: []string{}},
		{Wave: 0, Apps: []string{"App/b"}, WaitsFor: []string{"App/a"}, Objects: []string{"App/b"}, Workloads: []string{"App/b"}},
	}
	var buf bytes.Buffer
	if err := WaveTable(waves).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	if n := strings.Count(html, `data-testid="wave"`); n != 4 {
		t.Errorf("%d wave rows, want 4:\n%s", n, html)
	}
	for _, want := range []string{`data-testid="waves"`, `data-wave="1"`, "ConfigMap/db, Deployment/db", "not healthy after 5s: Deployment/db is Progressing", "not-started", "(post- hooks)", "ConfigMap/&lt;script&gt;x&lt;/script&gt;", "of App/b", "once App/a healthy"} {
		if !strings.Contains(html, want) {
			t.Errorf("WaveTable lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "<script>x") {
		t.Errorf("an object name is not escaped:\n%s", html)
	}
	if i, j := strings.Index(html, `data-wave="0"`), strings.Index(html, `data-wave="1"`); i < 0 || j < i {
		t.Errorf("waves out of order:\n%s", html)
	}
}
