package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The generic webhook's signature headers. The signed content is the
// timestamp header's value (decimal Unix seconds), a ".", then the body,
// byte for byte:
//
//	X-Deploy-Web-Timestamp: 1767225600
//	X-Deploy-Web-Signature: sha256=hex(HMAC-SHA256(key, "1767225600." + body))
//
// A receiver recomputes the HMAC with its copy of the key, compares it in
// constant time, and refuses a timestamp further than a few minutes from
// its clock (VerifySignature does all three): a captured request cannot be
// replayed later, nor its body swapped.
const (
	HeaderSignature = "X-Deploy-Web-Signature"
	HeaderTimestamp = "X-Deploy-Web-Timestamp"
	// HeaderDelivery carries the delivery id (the same for every attempt
	// of one message), for receivers that deduplicate.
	HeaderDelivery = "X-Deploy-Web-Delivery"
	// SignatureTolerance is how far from now VerifySignature accepts a
	// timestamp.
	SignatureTolerance = 5 * time.Minute
)

// Sign returns the two header values for body signed with key at t.
func Sign(key, body []byte, t time.Time) (signature, timestamp string) {
	timestamp = strconv.FormatInt(t.Unix(), 10)
	return "sha256=" + hex.EncodeToString(mac(key, timestamp, body)), timestamp
}

func mac(key []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// VerifySignature checks a request's signature and timestamp headers
// against body and key, as a receiver should: the timestamp within
// tolerance of now, the HMAC equal in constant time.
func VerifySignature(key, body []byte, signature, timestamp string, now time.Time, tolerance time.Duration) error {
	secs, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("notify: %s %q is not Unix seconds", HeaderTimestamp, timestamp)
	}
	if d := now.Sub(time.Unix(secs, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("notify: %s is %s from now, more than %s: a replay or a wrong clock", HeaderTimestamp, d.Round(time.Second), tolerance)
	}
	hexSig, ok := strings.CutPrefix(signature, "sha256=")
	if !ok {
		return fmt.Errorf("notify: %s does not start with sha256=", HeaderSignature)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || !hmac.Equal(got, mac(key, timestamp, body)) {
		return errors.New("notify: signature does not match the body and key")
	}
	return nil
}
