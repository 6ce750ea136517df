package auth

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDecideRecheck(t *testing.T) {
	for _, tt := range []struct {
		name       string
		err        error
		gotSubject string
		wasAdmin   bool
		nowAdmin   bool
		want       recheckOutcome
		wantWhy    string
	}{
		{"still a superadmin", nil, "alice", true, true, recheckKeep, ""},
		{"removed from the group", nil, "alice", true, false, recheckSignOut, "no longer a superadmin"},
		{"never was one, still is not", nil, "alice", false, false, recheckKeep, ""},
		{"became one", nil, "alice", false, true, recheckKeep, ""},
		{"refused (disabled, revoked)", fmt.Errorf("%w: invalid_grant", errRefreshRefused), "", true, false, recheckSignOut, "refused"},
		{"invalid answer", fmt.Errorf("%w: id token: expired", errRefreshInvalid), "", true, false, recheckSignOut, "invalid refresh answer"},
		{"no refresh token", errNoRefreshToken, "", true, false, recheckSignOut, "no refresh token"},
		{"IdP down", fmt.Errorf("%w: 503", errRefreshUnavailable), "", true, false, recheckUnavailable, "unavailable"},
		{"another subject", nil, "mallory", true, true, recheckSignOut, "another subject"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, why := decideRecheck("alice", tt.err, tt.gotSubject, tt.wasAdmin, tt.nowAdmin)
			if got != tt.want || !strings.Contains(why, tt.wantWhy) {
				t.Errorf("decideRecheck(alice, %v, %q, %v, %v) = %v, %q; want %v, %q", tt.err, tt.gotSubject, tt.wasAdmin, tt.nowAdmin, got, why, tt.want, tt.wantWhy)
			}
		})
	}
}

// TestSessionRecheck runs the re-check against the test IdP: a session
// older than SessionRecheck asks the IdP again on its next request.
func TestSessionRecheck(t *testing.T) {
	const recheck = time.Minute
	withRecheck := func(_ *testIdP, c *Config) { c.SessionRecheck = recheck }
	due := func(env *testEnv) { env.clock.Advance(recheck + time.Second) }

	t.Run("still a superadmin: the session goes on with a rotated token", func(t *testing.T) {
		env := newTestServer(t, withRecheck)
		env.mustLogin()
		due(env)
		resp := env.get("/apps")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /apps after the re-check interval: status = %d, want 200; body %s", resp.StatusCode, resp.body)
		}
		if c := resp.cookie(SessionCookie); c == nil || c.MaxAge <= 0 {
			t.Errorf("re-check stored no updated session cookie: %v", c)
		}
		// Within the interval again: no second refresh.
		if resp := env.get("/apps"); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /apps after the re-check: status = %d, want 200", resp.StatusCode)
		}
		// Due again: the rotated token is used (the first one now would
		// revoke the whole family at this IdP).
		due(env)
		if resp := env.get("/apps"); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /apps at the second re-check: status = %d, want 200; body %s", resp.StatusCode, resp.body)
		}
		env.idp.set(func(p *testIdP) {
			if p.refreshCount != 2 {
				t.Errorf("refreshes at the IdP = %d, want 2 (one per re-check)", p.refreshCount)
			}
		})
	})

	signedOut := []struct {
		name    string
		change  func(*testIdP)
		wantLog string
	}{
		{"removed from the admin group", func(p *testIdP) { p.claims = map[string]any{"groups": []string{"developers"}} }, "no longer a superadmin"},
		{"disabled (refresh refused)", func(p *testIdP) { p.refreshStatus = http.StatusBadRequest }, "refused"},
		{"invalid_grant with 403 (Auth0)", func(p *testIdP) {
			p.refreshReply = func(w http.ResponseWriter) {
				writeJSON(w, http.StatusForbidden, map[string]string{"error": "invalid_grant"})
			}
		}, "refused"},
		{"invalid_grant with 401", func(p *testIdP) {
			p.refreshReply = func(w http.ResponseWriter) {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_grant"})
			}
		}, "refused"},
		{"access_denied (Hydra: a disabled user)", func(p *testIdP) {
			p.refreshReply = func(w http.ResponseWriter) {
				writeJSON(w, http.StatusForbidden, map[string]string{"error": "access_denied"})
			}
		}, "refused"},
		{"invalid_client with 401", func(p *testIdP) {
			p.refreshReply = func(w http.ResponseWriter) {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			}
		}, "refused"},
		{"invalid_request with 400", func(p *testIdP) {
			p.refreshReply = func(w http.ResponseWriter) {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
			}
		}, "refused"},
		{"403 without an OAuth2 body (a proxy)", func(p *testIdP) {
			p.refreshReply = func(w http.ResponseWriter) { http.Error(w, "denied", http.StatusForbidden) }
		}, "refused"},
		{"another subject", func(p *testIdP) { p.refreshSubject = "mallory-sub" }, "another subject"},
		{"ID token for another audience", func(p *testIdP) { p.claims = map[string]any{"aud": "someone-else"} }, "invalid refresh answer"},
		{"expired ID token", func(p *testIdP) { p.claims = map[string]any{"exp": time.Now().Add(-time.Hour).Unix()} }, "invalid refresh answer"},
	}
	for _, tt := range signedOut {
		t.Run("signed out: "+tt.name, func(t *testing.T) {
			env := newTestServer(t, withRecheck)
			env.mustLogin()
			env.idp.set(tt.change)
			// Before the interval nothing is asked: the session still works.
			if resp := env.get("/apps"); resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /apps before the re-check: status = %d, want 200", resp.StatusCode)
			}
			due(env)
			resp := env.get("/apps")
			if resp.StatusCode != http.StatusUnauthorized || resp.denial().Reason != ReasonSessionEnded {
				t.Errorf("GET /apps at the re-check: status = %d, reason %q, want 401 %q (a page saying so)", resp.StatusCode, resp.denial().Reason, ReasonSessionEnded)
			}
			if c := resp.cookie(SessionCookie); c == nil || c.MaxAge >= 0 {
				t.Errorf("GET /apps at the re-check: session cookie %v, want it cleared", c)
			}
			// The API answers 401 from now on: the cookie is gone.
			if resp := env.get("/v1/deploy/applications"); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET /v1/deploy/applications after sign-out: status = %d, want 401", resp.StatusCode)
			}
			logs := env.logs.String()
			if !strings.Contains(logs, "session ended at its re-check") || !strings.Contains(logs, tt.wantLog) ||
				!strings.Contains(logs, "subject=alice-sub") || !strings.Contains(logs, "email=alice@example.com") {
				t.Errorf("log lacks the sign-out line naming subject, email and %q:\n%s", tt.wantLog, logs)
			}
		})
	}

	t.Run("no refresh token: signed out at the first re-check", func(t *testing.T) {
		env := newTestServer(t, func(p *testIdP, c *Config) { c.SessionRecheck = recheck; p.noRefresh = true })
		env.mustLogin()
		due(env)
		if resp := env.get("/v1/deploy/applications"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET API at the re-check without a refresh token: status = %d, want 401", resp.StatusCode)
		}
	})

	t.Run("IdP down: 503, the session is kept for the next try", func(t *testing.T) {
		env := newTestServer(t, withRecheck)
		env.mustLogin()
		env.idp.set(func(p *testIdP) { p.refreshStatus = http.StatusServiceUnavailable })
		due(env)
		resp := env.get("/apps")
		if resp.StatusCode != http.StatusServiceUnavailable || resp.denial().Reason != ReasonRecheckUnavailable {
			t.Errorf("GET /apps with the IdP down: status = %d, reason %q; want 503 %q", resp.StatusCode, resp.denial().Reason, ReasonRecheckUnavailable)
		}
		if c := resp.cookie(SessionCookie); c != nil {
			t.Errorf("GET /apps with the IdP down set the session cookie %v, want it untouched", c)
		}
		env.idp.set(func(p *testIdP) { p.refreshStatus = 0 })
		env.clock.Advance(refreshRetryMin)
		if resp := env.get("/apps"); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /apps with the IdP back: status = %d, want 200; body %s", resp.StatusCode, resp.body)
		}
	})

	// An IdP that could not answer (a network error, 5xx, 408, 429) has
	// said nothing about the user: the session is kept (503 for now), the IdP
	// is asked again once its Retry-After (or refreshRetryMin) has passed,
	// not at every request, and the session goes on once it answers.
	kept := []struct {
		name  string
		reply func(w http.ResponseWriter)
		wait  time.Duration
	}{
		{"429 with Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "20")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}, 20 * time.Second},
		{"429 as JSON", func(w http.ResponseWriter) {
			writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "rate_limit_exceeded"})
		}, refreshRetryMin},
		{"408", func(w http.ResponseWriter) { http.Error(w, "timeout", http.StatusRequestTimeout) }, refreshRetryMin},
		{"500", func(w http.ResponseWriter) { http.Error(w, "oops", http.StatusInternalServerError) }, refreshRetryMin},
		{"502 from a proxy", func(w http.ResponseWriter) { http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway) }, refreshRetryMin},
		{"503 as JSON", func(w http.ResponseWriter) {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable"})
		}, refreshRetryMin},
		{"connection closed (a network error)", func(w http.ResponseWriter) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, refreshRetryMin},
	}
	for _, tt := range kept {
		t.Run("kept: "+tt.name, func(t *testing.T) {
			env := newTestServer(t, withRecheck)
			env.mustLogin()
			env.idp.set(func(p *testIdP) { p.refreshReply = tt.reply })
			due(env)
			for i := range 3 {
				resp := env.get("/apps")
				if resp.StatusCode != http.StatusServiceUnavailable || resp.denial().Reason != ReasonRecheckUnavailable {
					t.Errorf("GET /apps %d with the IdP answering %s: status = %d, reason %q; want 503 %q", i, tt.name, resp.StatusCode, resp.denial().Reason, ReasonRecheckUnavailable)
				}
				if c := resp.cookie(SessionCookie); c != nil {
					t.Errorf("GET /apps %d with the IdP answering %s set the session cookie %v, want it untouched", i, tt.name, c)
				}
			}
			env.idp.set(func(p *testIdP) {
				if p.refreshCount != 1 {
					t.Errorf("refreshes at the IdP for 3 requests within %v = %d, want 1", tt.wait, p.refreshCount)
				}
				p.refreshReply = nil
			})
			env.clock.Advance(tt.wait - time.Second)
			if resp := env.get("/apps"); resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("GET /apps a second before the retry wait (%v): status = %d, want 503 without asking", tt.wait, resp.StatusCode)
			}
			env.clock.Advance(time.Second)
			if resp := env.get("/apps"); resp.StatusCode != http.StatusOK {
				t.Errorf("GET /apps after the retry wait with the IdP back: status = %d, want 200; body %s", resp.StatusCode, resp.body)
			}
			if strings.Contains(env.logs.String(), "session ended") {
				t.Errorf("the session was ended:\n%s", env.logs)
			}
		})
	}

	t.Run("parallel requests share one refresh", func(t *testing.T) {
		env := newTestServer(t, withRecheck)
		env.mustLogin()
		due(env)
		u, _ := url.Parse(env.app.URL)
		cookies := env.client.Jar.Cookies(u)
		const n = 10
		var wg sync.WaitGroup
		statuses := make([]int, n)
		for i := range n {
			wg.Go(func() {
				statuses[i] = env.serve(request(http.MethodGet, "/apps", nil, cookies)).StatusCode
			})
		}
		wg.Wait()
		// And a request still carrying the old cookie afterwards.
		late := env.serve(request(http.MethodGet, "/apps", nil, cookies)).StatusCode
		for i, s := range append(statuses, late) {
			if s != http.StatusOK {
				t.Errorf("request %d with the pre-refresh cookie: status = %d, want 200", i, s)
			}
		}
		env.idp.set(func(p *testIdP) {
			if p.refreshCount != 1 {
				t.Errorf("refreshes at the IdP = %d, want 1 for %d requests of one session", p.refreshCount, n+1)
			}
		})
	})

	t.Run("logout revokes the refresh token: a copy of the cookie ends at its re-check", func(t *testing.T) {
		env := newTestServer(t, withRecheck)
		env.mustLogin()
		u, _ := url.Parse(env.app.URL)
		copied := env.client.Jar.Cookies(u)
		resp := env.post(LogoutPath, url.Values{"csrf_token": {env.csrf()}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: status = %d, want 303", LogoutPath, resp.StatusCode)
		}
		env.idp.set(func(p *testIdP) {
			if len(p.revoked) != 1 || !strings.HasPrefix(p.revoked[0], "rt-") {
				t.Errorf("revoked at the IdP = %q, want the session's refresh token", p.revoked)
			}
		})
		if !strings.Contains(env.logs.String(), "refresh_token_revoked=yes") {
			t.Errorf("logout line does not say the refresh token was revoked:\n%s", env.logs)
		}
		due(env)
		if got := env.serve(request(http.MethodGet, "/v1/deploy/applications", nil, copied)).StatusCode; got != http.StatusUnauthorized {
			t.Errorf("copied cookie after logout, at its re-check: status = %d, want 401", got)
		}
	})
}

func TestRefreshCallsRetryUnavailable(t *testing.T) {
	c := newRefreshCalls()
	clock := &fakeClock{}
	now := clock.Now
	calls := 0
	down := func() (refreshed, error) { calls++; return refreshed{}, fmt.Errorf("%w: 503", errRefreshUnavailable) }
	limited := func() (refreshed, error) {
		calls++
		return refreshed{}, &unavailableError{text: "token endpoint: 429", retry: 20 * time.Second}
	}
	up := func() (refreshed, error) { calls++; return refreshed{Subject: "alice"}, nil }
	if _, err := c.do("rt", now, down); !errors.Is(err, errRefreshUnavailable) {
		t.Fatalf("do(down) = %v, want errRefreshUnavailable", err)
	}
	if _, err := c.do("rt", now, up); !errors.Is(err, errRefreshUnavailable) || calls != 1 {
		t.Fatalf("do(up) within refreshRetryMin of an unavailable IdP = %v after %d calls; want the remembered outcome, 1 call", err, calls)
	}
	clock.Advance(refreshRetryMin)
	if _, err := c.do("rt", now, limited); !errors.Is(err, errRefreshUnavailable) || calls != 2 {
		t.Fatalf("do(limited) after refreshRetryMin = %v after %d calls; want a fresh call", err, calls)
	}
	clock.Advance(refreshRetryMin)
	if _, err := c.do("rt", now, up); !errors.Is(err, errRefreshUnavailable) || calls != 2 {
		t.Fatalf("do(up) within the IdP's Retry-After = %v after %d calls; want the remembered outcome", err, calls)
	}
	clock.Advance(20*time.Second - refreshRetryMin)
	if res, err := c.do("rt", now, up); err != nil || res.Subject != "alice" {
		t.Fatalf("do(up) after the IdP's Retry-After = %+v, %v; want a fresh call", res, err)
	}
	if res, err := c.do("rt", now, down); err != nil || res.Subject != "alice" {
		t.Errorf("do again within refreshReuse = %+v, %v; want the remembered outcome", res, err)
	}
	if calls != 3 {
		t.Errorf("calls = %d, want 3", calls)
	}
}

// TestRetryAfter: the wait before asking an unavailable IdP again.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		header string
		want   time.Duration
	}{
		{"", refreshRetryMin},
		{"20", 20 * time.Second},
		{" 20 ", 20 * time.Second},
		{"0", refreshRetryMin},
		{"-5", refreshRetryMin},
		{"86400", refreshRetryMax},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), refreshRetryMin},
		{"soon", refreshRetryMin},
	} {
		if got := retryAfter(tt.header, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}
