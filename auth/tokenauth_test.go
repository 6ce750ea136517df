package auth

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"golang.org/x/oauth2"
)

func TestTokenAuthStyle(t *testing.T) {
	tests := []struct {
		configured string
		supported  []string
		want       oauth2.AuthStyle
		wantErr    bool
	}{
		{"", nil, oauth2.AuthStyleInHeader, false},
		{"", []string{TokenAuthBasic, TokenAuthPost}, oauth2.AuthStyleInHeader, false},
		{"", []string{"private_key_jwt", TokenAuthPost}, oauth2.AuthStyleInParams, false},
		{"", []string{"private_key_jwt"}, 0, true},
		{TokenAuthPost, []string{TokenAuthBasic, TokenAuthPost}, oauth2.AuthStyleInParams, false},
		{TokenAuthPost, nil, oauth2.AuthStyleInParams, false},
		{TokenAuthBasic, []string{TokenAuthPost}, 0, true},
		{"client_secret_jwt", nil, 0, true},
	}
	for _, tt := range tests {
		got, err := tokenAuthStyle(tt.configured, tt.supported)
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("tokenAuthStyle(%q, %q) = %v, %v; want %v, error %v", tt.configured, tt.supported, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestRefreshRefusedOnAFreshReplica: a replica that has not yet talked to
// the token endpoint (just restarted) redeems a refresh token the IdP
// refuses (invalid_grant), at an IdP whose client takes one client
// authentication only, as Hydra's does. The refusal must read as a
// refusal (the user is signed out), not as the invalid_client x/oauth2's
// auto-detection would get by trying the other authentication next
// (an outage: the session kept, 503 on every request).
func TestRefreshRefusedOnAFreshReplica(t *testing.T) {
	for _, method := range []string{TokenAuthBasic, TokenAuthPost} {
		t.Run(method, func(t *testing.T) {
			env := newTestServer(t, func(p *testIdP, _ *Config) {
				p.clientAuth = method
				p.refreshStatus = http.StatusBadRequest // invalid_grant
				p.editDiscovery = func(doc map[string]any) { doc["token_endpoint_auth_methods_supported"] = []string{method} }
			})
			_, err := env.auth.refresh(context.Background(), "a-revoked-refresh-token")
			if !errors.Is(err, errRefreshRefused) {
				t.Errorf("refresh of a refused token at a %s-only IdP = %v, want %v", method, err, errRefreshRefused)
			}
		})
	}
}
