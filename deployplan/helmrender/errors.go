package helmrender

import "fmt"

// Error is a chart refused or a render stopped. Its fields are public
// text: they name files of the repository and say what to do, never
// anything of the machine.
type Error struct {
	// Chart names the chart as the caller named it (Request.Chart).
	Chart string
	// File is the file at fault, relative to the chart ("values.yaml",
	// "templates/deployment.yaml", "charts/redis-1.2.3.tgz"), or a values
	// file as the caller named it; "" for the chart as a whole.
	File string
	// Reason says what is wrong.
	Reason string
	// Hint says what to do.
	Hint string
}

func (e *Error) Error() string {
	where := e.Chart
	if e.File != "" {
		where += ": " + e.File
	}
	if e.Hint == "" {
		return fmt.Sprintf("helmrender: chart %s: %s", where, e.Reason)
	}
	return fmt.Sprintf("helmrender: chart %s: %s: %s", where, e.Reason, e.Hint)
}
