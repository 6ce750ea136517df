package deployplan

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// TargetPort is a Service port's targetPort as the manifest has it: a
// number (8080) or a named port ("http"). Its JSON is a number or a string
// accordingly; String gives either as text.
type TargetPort struct {
	Number int64
	Name   string
}

// String is the port number or its name.
func (p TargetPort) String() string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.FormatInt(p.Number, 10)
}

// MarshalJSON writes a number, or the name as a string.
func (p TargetPort) MarshalJSON() ([]byte, error) {
	if p.Name != "" {
		return json.Marshal(p.Name)
	}
	return json.Marshal(p.Number)
}

// UnmarshalJSON reads a number or a string (a string of digits, as older
// reports wrote every port, is a number).
func (p *TargetPort) UnmarshalJSON(b []byte) error {
	*p = TargetPort{}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			p.Number = n
			return nil
		}
		p.Name = s
		return nil
	}
	return json.Unmarshal(b, &p.Number)
}
