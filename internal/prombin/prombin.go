// Package prombin names the Prometheus deploy-web's demo and tests run:
// Debian's prometheus package's binary (.ci/run installs it; the README's
// setup names it).
package prombin

// Bin is the binary of Debian's prometheus package.
const Bin = "/usr/bin/prometheus"

// Package is the Debian package that installs Bin.
const Package = "prometheus"

// RequireEnv, set (CI sets it), makes a test that needs Bin fail when it
// is missing instead of skipping.
const RequireEnv = "DEPLOY_WEB_REQUIRE_PROMETHEUS"
