// Package gitops is the service layer of the workflows that write to an
// environment: rollback and sync through git, the commit-mode catalog
// move, promotion (request, approval, the write and its catalog edit) and
// auto-sync pauses. Each takes a typed request and answers a typed result
// or an *Error that carries its public text and its Kind; the handlers
// parse, authorize (their route table), call one method and render.
//
// A write through git goes: gate (release), freeze (FreezeGate), edit
// (writeback.Locate, or the catalog move), the checks before the push
// (render the edited tree), the commit (writeback.Commit), then the run
// that plans and applies it (envrun). Nothing here speaks HTTP.
package gitops
