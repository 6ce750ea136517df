package notify

import (
	"testing"
	"time"
)

func TestSign(t *testing.T) {
	// The documented scheme, computed independently (Python's hmac):
	// hex(HMAC-SHA256("k3y", "1767225600." + body)).
	at := time.Unix(1767225600, 0)
	sig, ts := Sign([]byte("k3y"), []byte(`{"a":1}`), at)
	if want := "sha256=18e3a92b3c484b2c9d4d8316e00e78ef3d811b03bdde524fbbee6291674b9ff3"; sig != want || ts != "1767225600" {
		t.Errorf("Sign = %s, %s; want %s, 1767225600", sig, ts, want)
	}
}

func TestVerifySignature(t *testing.T) {
	key, body := []byte("k3y"), []byte(`{"a":1}`)
	at := time.Unix(1767225600, 0)
	sig, ts := Sign(key, body, at)
	tests := []struct {
		name      string
		key, body []byte
		sig, ts   string
		now       time.Time
		wantOK    bool
	}{
		{"valid", key, body, sig, ts, at.Add(time.Minute), true},
		{"other key", []byte("k3z"), body, sig, ts, at, false},
		{"body changed", key, []byte(`{"a":2}`), sig, ts, at, false},
		// The timestamp is signed: moving it forward breaks the signature.
		{"timestamp moved", key, body, sig, "1767225900", at.Add(5 * time.Minute), false},
		{"replayed later", key, body, sig, ts, at.Add(6 * time.Minute), false},
		{"from the future", key, body, sig, ts, at.Add(-6 * time.Minute), false},
		{"no prefix", key, body, sig[len("sha256="):], ts, at, false},
		{"not hex", key, body, "sha256=zz", ts, at, false},
		{"no timestamp", key, body, sig, "", at, false},
	}
	for _, tt := range tests {
		err := VerifySignature(tt.key, tt.body, tt.sig, tt.ts, tt.now, SignatureTolerance)
		if (err == nil) != tt.wantOK {
			t.Errorf("%s: VerifySignature = %v, want ok %v", tt.name, err, tt.wantOK)
		}
	}
}
