package limit

import (
	"testing"
	"time"
)

func TestOr(t *testing.T) {
	for _, c := range []struct{ v, def, want int64 }{
		{0, 7, 7}, {-1, 7, 7}, {1, 7, 1}, {9, 7, 9},
	} {
		if got := Or(c.v, c.def); got != c.want {
			t.Errorf("Or(%d, %d) = %d, want %d", c.v, c.def, got, c.want)
		}
	}
	if got := Or(time.Duration(0), time.Second); got != time.Second {
		t.Errorf("Or(0s, 1s) = %v, want 1s", got)
	}
	if got := Or(3, 5); got != 3 {
		t.Errorf("Or(3, 5) = %d, want 3", got)
	}
}
