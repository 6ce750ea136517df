package promotion

import "time"

// Soaking is an App whose version in the source environment waits for
// its soak before it may be promoted into the target: its soak gate
// failed with a promotable time (Gate.PromotableAt).
type Soaking struct {
	App, Version   string
	Source, Target string
	// At is when the soak gate passes at the earliest.
	At time.Time
	// Message is the soak gate's.
	Message string
}
