// Package gitsource is deploy-web's one git client: it fetches from a git
// server over upload-pack (go-git speaks the protocol; no program runs)
// with its caps, for the plan (deployplan's renders, release notes and
// source heads) and for write-back alike.
//
// Every fetch is bounded: the pack at Limits.Pack on the wire, what its
// objects inflate to at Limits.Inflated (ScanPack, while the pack streams
// into a temporary file, before go-git indexes it: a zip bomb of a few
// kilobytes is refused, not inflated), every HTTP answer at
// HTTPOptions.Answers, and the store on disk, when the caller wraps it
// with CapFS. Each cap carries the name the caller's configuration gives
// it, so a *TooLargeError tells the user which setting to raise.
//
// The caller builds the Remote (which schemes it allows, which
// credentials, which redirects) and the storage; it decides which refs to
// fetch and records them. Errors of a step are a *StepError, so each
// caller words them its own way.
package gitsource
