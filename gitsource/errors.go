package gitsource

import "fmt"

// Cap is one byte limit of a fetch, with the names its errors use.
type Cap struct {
	// Max is the limit in bytes.
	Max int64
	// Limit names the setting ("limits.maxRepoBytes", "MaxPackBytes").
	Limit string
	// What names what is capped ("the fetched pack of https://host/r.git").
	What string
}

// TooLargeError is a fetch (or an answer, or the store) over a Cap.
type TooLargeError struct {
	// What and Limit are the Cap's.
	What, Limit string
	// Max is the Cap's value, Read what was read when it was crossed.
	Max, Read int64
	// Unit is "bytes", "bytes inflated" or "bytes written".
	Unit string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("gitsource: %s is too large: more than %d %s (read %d; %s)", e.What, e.Max, e.Unit, e.Read, e.Limit)
}

// over is the *TooLargeError of c with read bytes read.
func (c Cap) over(read int64, unit string) *TooLargeError {
	return &TooLargeError{What: c.What, Limit: c.Limit, Max: c.Max, Read: read, Unit: unit}
}

// StepError is the failure of one step of a fetch ("connect", "read the
// references", "fetch", "read the pack"): the caller words it.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return "gitsource: " + e.Step + ": " + e.Err.Error() }

func (e *StepError) Unwrap() error { return e.Err }
