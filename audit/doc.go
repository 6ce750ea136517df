// Package audit is the record of every change: one immutable record per
// action that writes to a cluster (apply, restore, prune, rollback, sync,
// auto-sync and self-heal runs, freeze and pause changes, promotions), and
// per refused or failed attempt, with the manifests it applied.
//
// Records live in the cluster, in deploy-web's namespace, as labelled
// ConfigMaps: the state of deploy-web is Kubernetes and git, there is no
// database, and every replica (and a restart) sees the same history. A
// record is a head ConfigMap whose annotation holds the record without its
// manifests, and whose binaryData holds the manifests (a gzip-compressed
// JSON array; a Secret by name and hash only, see StripSecrets). A record
// whose manifests would take the head past 900 KiB keeps them in part
// ConfigMaps instead, each part's SHA-256 in the head; Get reassembles them.
// Labels carry what a selector filters on (stream, verb, outcome, cluster,
// environment, App, actor), encoded or hashed when a value is not
// label-safe; names are built from hashes and sequence numbers only.
//
// Records form one chain per stream (an environment of a cluster, or an App
// outside environments). Record N carries the SHA-256 of the stored bytes of
// record N-1, which cover its manifests through their hashes, so an edited
// or deleted record is detected: the next record's prev no longer matches,
// or its predecessor is missing, and List, Get and Verify report chain.ok
// false with the reason.
//
// Every record head and stream head is also signed: an HMAC-SHA256 of its
// stored annotation under a key from the Secret KeySecretName in the same
// namespace (Options.Key, which serve reads from the mounted Secret, or
// the Secret read through the API, created once when missing). So someone
// who may edit ConfigMaps there but not read that Secret cannot re-chain
// the records after a deleted one, rewrite a record's prev, or move the
// stream head's newest record or retention boundary: what they write fails
// its signature. A stream head deleted or unsigned flags the stream's
// newest record (records after it may have gone with the head); a head set
// back to an older signed copy, after deleting the newest records, is
// flagged by a replica whose index saw those records (the index keeps the
// highest sequence number it saw per stream), and otherwise only by the
// second copies each record leaves: a Kubernetes Event and one structured
// log line. Someone who can read the key can forge records.
//
// Appends to a stream are serialised without a lock: a record's name is its
// stream and sequence number, so creating it claims the number (two
// writers, in two replicas, never both create record N), and a per-stream
// head ConfigMap, advanced by compare-and-swap on its resourceVersion,
// carries the last sequence number and hash to the next writer. A writer
// that loses the race reads the winner's record and chains after it.
//
// Reads are served from an index of record heads fed by a metadata-only
// informer (labels and annotations, never the manifests), so the audit page
// pages through tens of thousands of records in memory and verifies each
// chain link with a map lookup; Get reads one record's manifests on demand.
// Without a started index, List and Get read the same metadata with paged
// List calls.
//
// Retention keeps, per environment, the newest N records and those younger
// than an age (defaults 200 and 90 days). One replica enforces it, the
// holder of a coordination.k8s.io Lease; before deleting it writes the
// trimmed boundary (the last trimmed sequence number and its hash) to the
// stream head, so the oldest kept record starts a verifiable chain while a
// deletion outside the policy is still flagged. Refused records are
// chained in streams of their own (kept 100 deep), so refusals never trim
// a write's record; a Limiter counts them per person, and the handlers
// answer 429 past it.
//
// The signing key (SigningKey) also signs deploy-web's small state
// stores (internal/cmstore: freezes, pauses, promotion requests).
package audit
