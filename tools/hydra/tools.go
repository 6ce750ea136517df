//go:build tools

// Package hydra pins Ory Hydra, the OpenID Connect provider of the demo and
// the browser tests.
package hydra

import _ "github.com/ory/hydra/v2"
