// Package e2e holds deploy-web's browser tests: they build the real binary,
// start `deploy-web demo` (the real local control plane, the reference
// operator, the seeded fleet and a real OIDC provider), log in through the
// IdP's form in headless Chromium (Debian's chromium package) and click
// through the pages. Screenshots land in artifacts/e2e/ at the repository
// root.
package e2e
