// Package static holds deploy-web's browser assets (vendored htmx 2.0.11 and
// its SSE extension 2.2.4 from npm, the stylesheet, the icon and a few lines
// of JS), embedded so the binary works with no network.
package static

import "embed"

// FS holds the assets.
//
//go:embed *.js *.css *.svg
var FS embed.FS
