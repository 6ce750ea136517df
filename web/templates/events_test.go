package templates

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestEventsTabCapped: when the list holds only the newest of the
// object's events, the tab says so (and how many there were); a complete
// list says nothing more.
func TestEventsTabCapped(t *testing.T) {
	rows := make([]EventRow, 500)
	for i := range rows {
		rows[i] = EventRow{Type: "Normal", Reason: "Pulled", Count: 1, Last: time.Unix(0, 0)}
	}
	tests := []struct {
		name string
		p    ResourcePanel
		want string // "" = no note
	}{
		{"complete", ResourcePanel{Events: rows[:3], EventsTotal: 3}, ""},
		{"capped", ResourcePanel{Events: rows, EventsTotal: 1234, EventsCapped: true}, "Showing the newest 500 of 1234 events."},
		{"incomplete", ResourcePanel{Events: rows, EventsTotal: 10000, EventsCapped: true, EventsIncomplete: true},
			"Showing the newest 500 of the first 10000 events read; this object has more."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := eventsTab(tt.p).Render(t.Context(), &buf); err != nil {
				t.Fatal(err)
			}
			body := strings.Join(strings.Fields(buf.String()), " ")
			if has := strings.Contains(body, `data-testid="events-capped"`); has != (tt.want != "") {
				t.Errorf("eventsTab: events-capped note present = %v, want %v (%s)", has, tt.want != "", body)
			}
			if tt.want != "" && !strings.Contains(body, tt.want) {
				t.Errorf("eventsTab = %s\nwant it to say %q", body, tt.want)
			}
			if got := strings.Count(body, "<tr"); got != len(tt.p.Events)+1 {
				t.Errorf("eventsTab has %d rows, want %d events and the header", got, len(tt.p.Events))
			}
		})
	}
}
