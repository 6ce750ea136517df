package devcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// writeKwokConfig writes KWOK's configuration: the Stage documents and one
// ClusterLogs object built from logs. With no logs it writes a small default
// log file so that GetLogs has something true to return.
func writeKwokConfig(dir string, logs []LogSource) (string, error) {
	if len(logs) == 0 {
		file := filepath.Join(dir, "default-container.log")
		if err := os.WriteFile(file, defaultLog(time.Now()), 0o600); err != nil {
			return "", fmt.Errorf("devcluster: write default log: %w", err)
		}
		logs = []LogSource{{File: file}}
	}
	var entries []map[string]any
	for _, l := range logs {
		abs, err := filepath.Abs(l.File)
		if err != nil {
			return "", fmt.Errorf("devcluster: log file: %w", err)
		}
		e := map[string]any{"logsFile": abs, "follow": l.Follow}
		if len(l.Containers) > 0 {
			e["containers"] = l.Containers
		}
		entries = append(entries, e)
	}
	clusterLogs, err := yaml.Marshal(map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "ClusterLogs",
		"metadata":   map[string]any{"name": "deploy-web-logs"},
		"spec":       map[string]any{"logs": entries},
	})
	if err != nil {
		return "", fmt.Errorf("devcluster: encode logs: %w", err)
	}
	st, err := stages()
	if err != nil {
		return "", err
	}
	docs := append(st, string(clusterLogs))
	path := filepath.Join(dir, "kwok.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		return "", fmt.Errorf("devcluster: write kwok config: %w", err)
	}
	return path, nil
}

// defaultLog returns a few CRI-format log lines.
func defaultLog(now time.Time) []byte {
	var b strings.Builder
	for i, msg := range []string{"starting", "listening on :8080", "ready"} {
		ts := now.Add(time.Duration(i-3) * time.Second).UTC().Format(time.RFC3339Nano)
		fmt.Fprintf(&b, "%s stdout F %s\n", ts, msg)
	}
	return []byte(b.String())
}

// CRILine formats one log line in the CRI log format KWOK reads.
func CRILine(ts time.Time, stream, text string) string {
	return ts.UTC().Format(time.RFC3339Nano) + " " + stream + " F " + text + "\n"
}
