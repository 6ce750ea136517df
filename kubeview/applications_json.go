package kubeview

import (
	"bytes"
	"encoding/json"
)

// RowJSON is an AppRow's JSON, encoded once when the fleet computes the
// row: what json.Marshal writes for the row with an empty Cluster, less
// its opening `{"cluster":"",`, so that a row of any cluster is written
// from the same bytes (Page.AppendRowJSON). nil when the row could not be
// encoded (json.Marshal fails on a time outside years 0-9999).
type RowJSON []byte

// rowJSONPrefix is what json.Marshal writes first for an AppRow with an
// empty Cluster: its first field.
const rowJSONPrefix = `{"cluster":"",`

// encodeRow encodes a row for RowJSON.
func encodeRow(r *AppRow) RowJSON {
	c := *r
	c.Cluster = ""
	b, err := json.Marshal(&c)
	if err != nil || !bytes.HasPrefix(b, []byte(rowJSONPrefix)) {
		return nil
	}
	return b[len(rowJSONPrefix):len(b):len(b)]
}

// AppendRowJSON appends to dst the JSON of p.Rows[i], byte for byte what
// json.Marshal(p.Rows[i]) writes, from the row's cached encoding. ok is
// false, and dst returned as it was, when the page has no encoding for the
// row.
func (p Page) AppendRowJSON(dst []byte, i int) (out []byte, ok bool) {
	if i < 0 || i >= len(p.Rows) || i >= len(p.Encoded) || p.Encoded[i] == nil {
		return dst, false
	}
	dst = append(dst, `{"cluster":`...)
	dst = appendJSONString(dst, p.Rows[i].Cluster)
	dst = append(dst, ',')
	return append(dst, p.Encoded[i]...), true
}

// appendJSONString appends s as json.Marshal writes a string: as it is
// between quotes when it holds only printable ASCII that needs no escape
// (a cluster name, a DNS label), else through json.Marshal.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			b, err := json.Marshal(s)
			if err != nil { // a string always encodes
				panic("kubeview: encode a string: " + err.Error())
			}
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
