package deployplan

import "fmt"

// TooLargeError says a repository (or a fetched pack) is over a limit.
type TooLargeError struct {
	// What names the repository or the pack.
	What string
	// Limit names the limit ("limits.maxRepoBytes").
	Limit string
	// Max is the limit's value, Read what was read when it was crossed.
	Max, Read int64
	// Unit is "bytes" or "files".
	Unit string
}

func (e *TooLargeError) Error() string { return "deployplan: " + e.Public() }

// Public is the limit crossed, in words a user may read.
func (e *TooLargeError) Public() string {
	return fmt.Sprintf("%s is too large: more than %d %s (read %d; %s)", e.What, e.Max, e.Unit, e.Read, e.Limit)
}
