package gitsource

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
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
// every later object of the pack inflate past the cap.
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
			err := ScanPack(bytes.NewReader(handPack(t, tt.objs)), Cap{Max: limit, Limit: "limits.maxInflatedBytes", What: "test pack"})
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Limit != "limits.maxInflatedBytes" || tl.What != "test pack" || tl.Unit != "bytes inflated" {
				t.Fatalf("ScanPack(%s) = %v, want a *TooLargeError of the cap", tt.name, err)
			}
		})
	}
}

// TestScanPackWithinCap: a pack whose objects inflate to the cap exactly
// passes, and is read to its end (the copy on disk is whole).
func TestScanPackWithinCap(t *testing.T) {
	blob := make([]byte, 1000)
	pack := handPack(t, []packObject{{typ: 3, declared: uint64(len(blob)), content: blob}})
	var copied bytes.Buffer
	if err := ScanPack(io.TeeReader(bytes.NewReader(pack), &copied), Cap{Max: 1000}); err != nil {
		t.Fatalf("ScanPack(1000 bytes, cap 1000) = %v, want nil", err)
	}
	if !bytes.Equal(copied.Bytes(), pack) {
		t.Errorf("ScanPack read %d of the pack's %d bytes, want all", copied.Len(), len(pack))
	}
	if err := ScanPack(bytes.NewReader(pack), Cap{Max: 999}); err == nil {
		t.Error("ScanPack(1000 bytes, cap 999) = nil, want a *TooLargeError")
	}
}

func TestDeltaTargetSize(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want int64
		ok   bool
	}{
		{[]byte{0x05, 0x07}, 7, true},
		{[]byte{0x80, 0x01, 0x80, 0x80, 0x40}, 1 << 20, true}, // 128, then 2^20
		{[]byte{0x05}, 0, false},
		{[]byte{0x85}, 0, false},
	} {
		got, ok := deltaTargetSize(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("deltaTargetSize(%x) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
