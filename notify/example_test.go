package notify_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/notify"
)

// A receiver checks a generic webhook's signature before trusting the
// body: the HMAC of timestamp + "." + body, and a recent timestamp.
func ExampleVerifySignature() {
	key := []byte("the key in the Secret")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		err = notify.VerifySignature(key, body, r.Header.Get(notify.HeaderSignature), r.Header.Get(notify.HeaderTimestamp), time.Now(), notify.SignatureTolerance)
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "ok")
	})

	body := `{"summary":"checkout is degraded"}`
	sig, ts := notify.Sign(key, []byte(body), time.Now())
	for _, s := range []string{sig, "sha256=00"} {
		req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
		req.Header.Set(notify.HeaderSignature, s)
		req.Header.Set(notify.HeaderTimestamp, ts)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// 200
	// 401
}
