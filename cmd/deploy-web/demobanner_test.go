package main

import (
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/demo"
)

// TestBannerNamesPrometheus: the demo's banner has a Prometheus: line
// with its URL and the check it runs.
func TestBannerNamesPrometheus(t *testing.T) {
	var b strings.Builder
	printBanner(&b, demoState{URL: "http://127.0.0.1:8080/", Prometheus: "http://127.0.0.1:19090"})
	var line string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Prometheus:") {
			line = l
		}
	}
	for _, w := range []string{"http://127.0.0.1:19090", demo.ErrorRateCheck + " (errors <= 5%)", demo.FailingApp + " " + demo.DevVersion + " (8% errors)"} {
		if !strings.Contains(line, w) {
			t.Errorf("the banner's Prometheus line %q lacks %q (banner:\n%s)", line, w, b.String())
		}
	}
}
