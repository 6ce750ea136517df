package autosync

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDriftSeen(t *testing.T) {
	d := NewDriftSeen()
	steps := []struct {
		at   time.Duration
		env  string
		refs []string
		want []DriftedObject
	}{
		{0, "dev", []string{"b", "a", "a"}, []DriftedObject{{"a", t0}, {"b", t0}}},
		{time.Minute, "dev", []string{"a", "c"}, []DriftedObject{{"a", t0}, {"c", t0.Add(time.Minute)}}},
		{time.Minute, "qa", []string{"a"}, []DriftedObject{{"a", t0.Add(time.Minute)}}},
		// b was put back, then drifted again: a new grace period.
		{2 * time.Minute, "dev", []string{"a", "b", "c"}, []DriftedObject{{"a", t0}, {"b", t0.Add(2 * time.Minute)}, {"c", t0.Add(time.Minute)}}},
		{3 * time.Minute, "dev", nil, []DriftedObject{}},
		{4 * time.Minute, "dev", []string{"a"}, []DriftedObject{{"a", t0.Add(4 * time.Minute)}}},
	}
	for i, s := range steps {
		got := d.Observe(s.env, s.refs, t0.Add(s.at))
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d: Observe(%s, %v) (-want +got):\n%s", i, s.env, s.refs, diff)
		}
	}
	d.Observe("qa", nil, t0)
	if n := len(d.since); n != 1 {
		t.Errorf("DriftSeen remembers %d environments, want 1 (qa has no drift left)", n)
	}
}
