package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/internal/sign"
)

// envelopeVersion is the version of the stored record format.
const envelopeVersion = 1

// envelope is a record as stored in its head's AnnotationRecord: the
// record without manifests and chain, its place in its stream, the hash
// of its predecessor, and where its manifests are with their hashes.
// The annotation's bytes, exactly as written, are what the chain hashes.
type envelope struct {
	Version   int         `json:"v"`
	Stream    string      `json:"stream"`
	Seq       int64       `json:"seq"`
	Prev      string      `json:"prev"`
	Record    Record      `json:"record"`
	Manifests manifestRef `json:"manifests"`
}

// manifestRef says where a record's manifests are: inline in the head
// (no Parts) or in Parts, in order. SHA256 and Bytes cover the whole
// compressed array. Omitted says why there are none.
type manifestRef struct {
	Bytes   int64     `json:"bytes"`
	SHA256  string    `json:"sha256"`
	Parts   []partRef `json:"parts,omitempty"`
	Omitted string    `json:"omitted,omitempty"`
}

type partRef struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// recordHashDomain separates record hashes from any other SHA-256 of the
// same bytes.
const recordHashDomain = "deploy-web audit record v1\n"

// RecordHash is the hash the next record of a stream carries, of a
// record's stored bytes (its AnnotationRecord annotation). The rule is
// public: anyone can compute it, which is why records are also signed.
func RecordHash(stored []byte) string { return recordHash(stored) }

// recordHash is the hash the next record of the stream carries: SHA-256
// over the stored envelope bytes, which name the manifests' and every
// part's hash, so it covers the whole record.
func recordHash(stored []byte) string {
	h := sha256.New()
	h.Write([]byte(recordHashDomain))
	h.Write(stored)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// streamState is a stream head's AnnotationStream: the stream, the last
// record appended (Seq, Hash) and the retention boundary (every record up
// to TrimmedThrough was trimmed by policy; TrimmedHash is the hash of
// record TrimmedThrough, which the oldest kept record carries as prev).
//
// RebuiltAfter is set when the head was found missing (or failing its
// signature) while the stream had records, and rebuilt from the newest
// record left: a record newer than that one may have been deleted with
// the head, which the chain can no longer tell, so the record after
// RebuiltAfter is flagged.
type streamState struct {
	Version        int       `json:"v"`
	Stream         string    `json:"stream"`
	Key            streamKey `json:"key"`
	Seq            int64     `json:"seq"`
	Hash           string    `json:"hash"`
	TrimmedThrough int64     `json:"trimmedThrough"`
	TrimmedHash    string    `json:"trimmedHash"`
	RebuiltAfter   int64     `json:"rebuiltAfter,omitempty"`
}

// entry is a record head as read (from the index or a List): its envelope
// without manifests, its hash, and what is wrong with it on its own.
type entry struct {
	name    string
	stream  string
	seq     int64
	created time.Time
	env     envelope
	hash    string
	// bad says why the head cannot be trusted by itself (unparsable,
	// labels or name not matching its record); "" when fine.
	bad string
}

// entryOf reads a record head's metadata and checks its signature with
// g. The stream and sequence number come from the name (which the API
// server keeps fixed), so a head whose annotation was edited beyond
// parsing still has its place in the chain.
func entryOf(m metav1.Object, g *sign.Key) *entry {
	e := &entry{name: m.GetName(), created: m.GetCreationTimestamp().Time}
	id := m.GetName()[min(len(namePrefix), len(m.GetName())):]
	stream, seq, err := parseID(id)
	if err != nil {
		e.bad = "the name is not a record name"
		return e
	}
	e.stream, e.seq = stream, seq
	raw, ok := m.GetAnnotations()[AnnotationRecord]
	if !ok {
		e.bad = "the record annotation is gone"
		return e
	}
	e.hash = recordHash([]byte(raw))
	if err := json.Unmarshal([]byte(raw), &e.env); err != nil {
		e.bad = "the record annotation is not a record"
		return e
	}
	r := &e.env.Record
	mac, signed := m.GetAnnotations()[AnnotationMAC]
	switch {
	case !signed:
		e.bad = "it is not signed (written without deploy-web's key, or its signature was removed)"
	case !g.Verify(macDomainRecord, []byte(raw), mac):
		e.bad = "its signature does not match (edited after it was written, or forged)"
	case e.env.Stream != stream || e.env.Seq != seq || r.ID != id:
		e.bad = "the record names another place in the chain than its name"
	case !inStream(r, stream):
		e.bad = "the record's cluster, environment or App is not its stream's"
	case !maps.Equal(recordLabels(r, stream), labelsOf(m)):
		e.bad = "its labels do not match the record (edited after it was written)"
	}
	if !partsNamed(id, e.env.Manifests.Parts) {
		// Never read or delete a ConfigMap an edited record points at,
		// whatever else is wrong with it.
		if e.bad == "" {
			e.bad = "it names parts that are not its own"
		}
		e.env.Manifests.Parts = nil
	}
	return e
}

// partsNamed reports whether every part has the name Append gives part i
// of record id with that hash.
func partsNamed(id string, parts []partRef) bool {
	if len(parts) > maxParts {
		return false
	}
	for i, p := range parts {
		h, ok := strings.CutPrefix(p.SHA256, "sha256:")
		if !ok || len(h) != 64 || p.Name != partName(id, i, h[:8]) {
			return false
		}
	}
	return true
}

// labelsOf is m's labels restricted to the ones recordLabels sets.
func labelsOf(m metav1.Object) map[string]string {
	out := map[string]string{}
	for _, k := range []string{LabelManagedBy, LabelComponent, LabelStream, LabelVerb, LabelOutcome, LabelCluster, LabelEnvironment, LabelApp, LabelActor} {
		if v, ok := m.GetLabels()[k]; ok {
			out[k] = v
		}
	}
	return out
}

// streamStateOf reads a stream head's metadata; nil when it does not hold
// a state signed with g's key.
func streamStateOf(m metav1.Object, g *sign.Key) *streamState {
	raw, ok := m.GetAnnotations()[AnnotationStream]
	if !ok || !g.Verify(macDomainStream, []byte(raw), m.GetAnnotations()[AnnotationMAC]) {
		return nil
	}
	var st streamState
	if json.Unmarshal([]byte(raw), &st) != nil || streamHeadName(st.Stream) != m.GetName() {
		return nil
	}
	return &st
}

// link decides a record's chain: its own head must be sound, its prev
// must be the hash of its predecessor as stored now (or, once the
// predecessor was trimmed, the boundary's hash), and its own hash must be
// the one its successor carries (or, for the newest, the one the stream
// head recorded). So an edited record is flagged itself, with its
// successor; a deleted one flags both neighbours. pred and succ are nil
// when absent; head is nil when the stream head is gone or fails its
// signature (then the newest record is flagged: records after it may
// have been deleted with the head). seen is the highest sequence number
// of the stream this process has seen: a newest record below it, past
// the retention boundary, means newer records were deleted and the head
// set back (to a copy of an older, validly signed head).
func link(e, pred, succ *entry, head *streamState, seen int64) Chain {
	c := Chain{Prev: e.env.Prev, OK: true}
	fail := func(format string, args ...any) {
		if c.OK {
			c.OK, c.Reason = false, fmt.Sprintf(format, args...)
		}
	}
	if e.bad != "" {
		fail("record %s: %s", idOf(e), e.bad)
	}
	prevID := recordID(e.stream, e.seq-1)
	switch {
	case e.seq == 1:
		if e.env.Prev != "" {
			fail("record %s is the first of its stream but carries a prev hash", idOf(e))
		}
	case pred != nil:
		if pred.hash != e.env.Prev {
			fail("record %s was changed after record %s was written: its hash no longer matches", prevID, idOf(e))
		}
	case head == nil:
		fail("record %s is missing and the stream head is gone", prevID)
	case e.seq-1 == head.TrimmedThrough:
		if head.TrimmedHash != e.env.Prev {
			fail("record %s does not chain to the retention boundary (record %s, trimmed)", idOf(e), prevID)
		}
	case e.seq-1 < head.TrimmedThrough:
		// Awaiting its own trim: older records are gone by policy.
	case e.seq-1 == head.RebuiltAfter:
		// Flagged below.
	default:
		fail("record %s is missing: deleted outside retention", prevID)
	}
	if head != nil && head.RebuiltAfter > 0 && e.seq-1 == head.RebuiltAfter {
		fail("the stream head was deleted or forged and rebuilt after record %s: records written after that one before the rebuild may have been deleted", prevID)
	}
	nextID := recordID(e.stream, e.seq+1)
	switch {
	case succ != nil:
		if succ.env.Prev != e.hash {
			fail("record %s was changed after record %s was written: its hash no longer matches", idOf(e), nextID)
		}
	case head == nil:
		fail("the stream head is missing or its signature does not match: records after %s may have been deleted", idOf(e))
	case head.Seq == e.seq:
		if head.Hash != e.hash {
			fail("record %s was changed after it was written: its hash no longer matches the stream head's", idOf(e))
		}
		if seen > e.seq && seen > head.TrimmedThrough {
			fail("record %s was seen and is gone, and the stream head was set back to record %s: deleted outside retention", recordID(e.stream, seen), idOf(e))
		}
	case head.Seq > e.seq:
		fail("record %s is missing: deleted outside retention", nextID)
	}
	return c
}

// idOf is e's record ID, from its name.
func idOf(e *entry) string { return recordID(e.stream, e.seq) }
