package insights

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
)

// csvHeader is the first line of WriteCSV: one column per number of the
// four metrics, after the row's environment and App.
var csvHeader = []string{"environment", "cluster", "namespace", "app",
	"deployments", "deployments_per_day",
	"lead_time_count", "lead_time_median_seconds", "lead_time_p90_seconds",
	"change_failures", "change_failure_rate",
	"restores", "time_to_restore_median_seconds", "time_to_restore_p90_seconds", "unrestored"}

// WriteCSV writes rep's rows (an environment's own row has an empty app)
// as CSV. A cell that a spreadsheet would read as a formula (starting
// with =, +, -, @, a tab or a carriage return) is written with a leading
// apostrophe: names come from config and the cluster, and a CSV is
// opened in spreadsheets.
func WriteCSV(w io.Writer, rep Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, r := range rep.Rows {
		m := r.Metrics
		rec := []string{csvText(r.Environment), csvText(r.Cluster), csvText(r.Namespace), csvText(r.App),
			strconv.Itoa(m.DeploymentFrequency.Deployments), csvFloat(m.DeploymentFrequency.PerDay),
			strconv.Itoa(m.LeadTime.Count), csvFloat(m.LeadTime.MedianSeconds), csvFloat(m.LeadTime.P90Seconds),
			strconv.Itoa(m.ChangeFailureRate.Failures), csvFloat(m.ChangeFailureRate.Rate),
			strconv.Itoa(m.TimeToRestore.Count), csvFloat(m.TimeToRestore.MedianSeconds), csvFloat(m.TimeToRestore.P90Seconds),
			strconv.Itoa(m.TimeToRestore.Unrestored)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// csvText neutralises a cell a spreadsheet would run as a formula.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
