// Package insights computes the delivery metrics (DORA's four) of the
// fleet from what deploy-web already records: the audit records (package
// audit) and the timeline's health entries (package timeline). It keeps
// nothing of its own: [Compute] is a pure function over records and
// entries that a handler read, bounded ([MaxRecords], [MaxEntries]), for
// one [Window] (7, 30 or 90 days) ending now.
//
// The four metrics, per environment and per App, and how each is read
// (docs/insights.md says the same for users):
//
//   - Deployment frequency: the succeeded applies and restores of an
//     environment (each App the record applied), and the succeeded
//     rollbacks of an App no environment renders (a direct patch, no
//     commit). An apply of the commit the environment's previous deploy
//     already applied (a self-heal, a re-run) is no new deployment.
//   - Lead time for changes: from the commit's first appearance in the
//     record (the write-back commit of a promotion or a rollback, or the
//     first apply of that commit in any environment), read up to
//     [CommitLookback] before the window, to the end of the apply that
//     made it live. A deployment without a commit (a local folder, a
//     direct patch) has no lead time.
//   - Change failure rate: the deployments followed within
//     [FailureWindow] of their end by the App turning Degraded (timeline),
//     a rollback of the environment or the App (audit), or a refused
//     promotion out of the environment whose promotion checks failed for
//     the App (audit blockers, promotion.GateBlocker).
//   - Time to restore: from the App's health turning Degraded to its next
//     Healthy (timeline), for the episodes that began in the window; an
//     episode not restored yet is counted apart (Unrestored).
package insights
