// Package auth is deploy-web's authentication and authorization boundary.
//
// It owns the OpenID Connect login (authorization-code flow with PKCE, state
// and nonce, built on go-oidc and x/oauth2), the encrypted cookie sessions
// (gorilla/sessions), the one [IsAdmin] predicate that decides who is a
// superadmin, the fail-closed [Auth.Require] middleware and CSRF protection.
//
// The OIDC provider and ID-token verifier are built once, in [New]; a bad
// configuration fails start-up loudly. Every request that reaches a handler
// wrapped by [Auth.Require] carries an [Identity] that passed IsAdmin, read
// with [FromContext]; anything else (no session, a tampered or expired
// cookie, an invalid bearer token, a missing CSRF token, a cross-origin
// unsafe request, any error at all) is a denial, rendered by the [Denier]
// the caller supplies.
//
// A session keeps the IdP's refresh token and re-checks its user with the
// IdP every Config.SessionRecheck (see [Auth.Require]): a user the IdP no
// longer vouches for, or who is no longer a superadmin, is signed out at the
// next check. Logout revokes the refresh token and, when the IdP advertises
// an end_session_endpoint, ends the IdP's session too.
//
// The package knows nothing about the rest of the application and renders
// no pages itself. Its routes are [LoginPath], [CallbackPath] and
// [LogoutPath]; the handlers package mounts them (see [Auth.Routes]).
package auth
