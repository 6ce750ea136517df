// Package writeback commits a version change to an environment's manifest
// repository: the write half of "git is the source of truth". A rollback or
// a rollout becomes one commit on the environment's branch (mode push) or
// on a review branch (mode branch), and the engine then applies that
// commit like any other.
//
// The flow of Commit is fetch, edit, commit, push:
//
//   - Fetch: the branch alone, shallow (depth 1, or Request.History
//     commits, at most MaxHistory, when Plan walks a file's history with
//     FileHistory), into a temporary folder on disk that is always removed. The fetched pack is capped
//     (Limits.MaxPackBytes, counted on the wire), every file the edits read
//     is capped inflated (Limits.MaxFileBytes) and the whole operation has
//     one deadline (Limits.Timeout). There is no checkout: the edits read
//     and write blobs of the fetched tree, so nothing but the files they
//     name is ever read in full or written.
//   - Edit: typed edits (SetKustomizeImage, SetAppImage, SetCatalogEntries),
//     each naming the one file it changes. A file must already exist, be a
//     regular file (no symbolic link, on the way or at the end) and lie
//     inside the repository (no "..", no absolute path, no .git). After the
//     commit is built its tree is compared with its parent: a commit that
//     changes any other path is never pushed. When no file changes, Commit
//     pushes nothing and returns a Result with NoChange set (SHA is the
//     branch head, which already holds the change).
//   - Restore (Request.Restore): a folder or a file set back to its tree
//     at an earlier commit of the repository (an environment's rollback),
//     that commit fetched alone under the same caps; files under the path
//     are added, changed and removed, and the same comparison refuses a
//     commit that changes anything outside it.
//   - Push: never forced. The update names the commit the edit was made
//     on; a server that has moved on rejects it. Such a rejection (or a
//     branch head that moved before the update was sent) fetches the
//     branch again, re-applies the edits once on the new head and pushes
//     again; a second rejection fails with a *ConflictError.
//
// Security rules:
//   - Only the configured repository URL is contacted: HTTP redirects are
//     refused (a forge that moved a repository is configured with its new
//     URL), every request has a deadline and every answer a byte cap, and a
//     URL with credentials in it is refused (credentials come from
//     Credentials.TokenEnv or Credentials.TokenFile).
//   - The token is never shown: it is not in a Result, and every error
//     Commit returns has it replaced by "[redacted]", whatever the server
//     or the transport put in the text.
//   - What the actor supplies (name, email, subject, reason, app and
//     version) is hostile: the author identity is a substitution of a
//     fixed set of fields with newlines and angle brackets stripped, the
//     commit subject is one line, the reason is quoted in the body, every
//     part is length-capped, and a review branch name is sanitised to one
//     valid ref under refs/heads/deploy-web/.
//   - Nothing here runs a program: go-git speaks the protocol. A file://
//     repository is read by go-git's in-process server and written
//     directly (objects, then the ref under git's own <ref>.lock), so its
//     hooks do not run.
//
// Locate chooses the edits of an image change on a fetched tree (a
// Request's Plan calls it, so a retry decides again on the new head): the
// images: entry of the environment's kustomization when it names the
// image, and spec.image of the App in the file that defines it unless that
// entry reaches spec.image (kustomize's images: rewrites containers only,
// unless configurations: declare the field); a workload's container image
// (no App) by that images: entry alone, added when there is none, so the
// file that declares the workload (a shared base) is never edited. A patch
// that would override the edit is refused.
package writeback
