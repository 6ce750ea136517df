package deployplan

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"testing"
)

// packObject is one object of a hand-made pack: its type (3: blob), the
// size its header declares and the content its zlib stream holds.
type packObject struct {
	typ      byte
	declared uint64
	base     []byte // the base's hash of a REF delta (type 7)
	content  []byte
}

// handPack writes a version 2 pack of objs, with its checksum, whatever
// sizes the headers declare.
func handPack(t *testing.T, objs []packObject) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("PACK")
	binary.Write(&b, binary.BigEndian, uint32(2))
	binary.Write(&b, binary.BigEndian, uint32(len(objs)))
	for _, o := range objs {
		n := o.declared
		c := o.typ<<4 | byte(n&0x0f)
		n >>= 4
		for n > 0 {
			b.WriteByte(c | 0x80)
			c = byte(n & 0x7f)
			n >>= 7
		}
		b.WriteByte(c)
		b.Write(o.base)
		z := zlib.NewWriter(&b)
		if _, err := z.Write(o.content); err != nil {
			t.Fatal(err)
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// varint128 is a delta header number: little-endian base 128.
func varint128(n uint64) []byte {
	var out []byte
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// TestScanPackDeclaredSizeOverflow: a delta whose headers declare sizes
// near 2^63 (its own length up to 2^60, the size of the object it makes up
// to 2^63-1) must not wrap the inflated total negative, which would let
// every later object of the pack inflate past limits.maxInflatedBytes.
func TestScanPackDeclaredSizeOverflow(t *testing.T) {
	const limit = 1 << 20
	big := make([]byte, 4*limit) // zeros: compresses ~1000:1
	bogus := append(varint128(1), varint128(1<<63-1)...)
	tests := []struct {
		name string
		objs []packObject
	}{
		{"a delta declaring 2^59 bytes making 2^63-1, then a blob over the cap", []packObject{
			{typ: 7, declared: 1 << 59, base: make([]byte, 20), content: bogus},
			{typ: 3, declared: uint64(len(big)), content: big},
		}},
		{"a delta making 2^63-1 bytes, then a blob over the cap", []packObject{
			{typ: 7, declared: uint64(len(bogus)), base: make([]byte, 20), content: bogus},
			{typ: 3, declared: uint64(len(big)), content: big},
		}},
		{"a blob over the cap alone", []packObject{
			{typ: 3, declared: uint64(len(big)), content: big},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := scanPack(bytes.NewReader(handPack(t, tt.objs)), limit, "test pack")
			var tl *TooLargeError
			if !errors.As(err, &tl) {
				t.Fatalf("scanPack(%s) = %v, want a *TooLargeError", tt.name, err)
			}
		})
	}
}
