package auth

import (
	"fmt"
	"slices"

	"golang.org/x/oauth2"
)

// The client authentications at the token endpoint deploy-web speaks
// (OpenID Connect Core 9): the client secret in a Basic header, or in the
// form body.
const (
	TokenAuthBasic = "client_secret_basic"
	TokenAuthPost  = "client_secret_post"
)

// tokenAuthStyle is how the client authenticates at the token endpoint:
// configured (Config.TokenAuthMethod), else from discovery's
// token_endpoint_auth_methods_supported (basic when listed, else post;
// basic, the specification's default, when the IdP lists none). It is
// never x/oauth2's auto-detection, which after a refused refresh
// (invalid_grant) tries the other authentication and returns that
// request's error (invalid_client): the refusal would read as an outage
// and the session would be kept.
func tokenAuthStyle(configured string, supported []string) (oauth2.AuthStyle, error) {
	styleOf := map[string]oauth2.AuthStyle{TokenAuthBasic: oauth2.AuthStyleInHeader, TokenAuthPost: oauth2.AuthStyleInParams}
	if configured != "" {
		s, ok := styleOf[configured]
		if !ok {
			return 0, fmt.Errorf("auth: config: TokenAuthMethod %q: want %s or %s", configured, TokenAuthBasic, TokenAuthPost)
		}
		if len(supported) > 0 && !slices.Contains(supported, configured) {
			return 0, fmt.Errorf("auth: config: TokenAuthMethod %s is not among the identity provider's token_endpoint_auth_methods_supported %q", configured, supported)
		}
		return s, nil
	}
	switch {
	case len(supported) == 0, slices.Contains(supported, TokenAuthBasic):
		return oauth2.AuthStyleInHeader, nil
	case slices.Contains(supported, TokenAuthPost):
		return oauth2.AuthStyleInParams, nil
	}
	return 0, fmt.Errorf("auth: the identity provider's token endpoint takes none of %s, %s (token_endpoint_auth_methods_supported %q)", TokenAuthBasic, TokenAuthPost, supported)
}
