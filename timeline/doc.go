// Package timeline keeps what happened to each App of the fleet (health,
// sync and drift transitions, restarts, OOM kills, crash loops, Warning
// Events, deploys, rollbacks, freezes, auto-sync pauses) in the cluster, in
// a bounded form, so that an App's timeline outlives the one hour of
// Kubernetes Events and a restart of the console.
//
// # Model
//
// An [Entry] is one thing that happened to an [App] at a time: a [Kind]
// from a closed set, the states before and after (From, To), a message, a
// ref (a history record id, pod/container, an object ref) and the App's
// revision. Text from the cluster is kept as data: made valid UTF-8 and cut
// to its cap ([MaxMessageBytes], [MaxRefBytes], [MaxStateBytes]), never
// escaped or interpreted here.
//
// [Transitions] is the pure detector: given an App's previous and current
// [State] (health code, sync verdict, drifted, revision, and per container
// the restart count, last termination reason and waiting reason) it returns
// the entries to record. kubeview fills a State from its fleet row
// (AppRow.Health, Sync, Version) and the container statuses of the pods it
// caches; this package imports nothing of kubeview. [Store.Observe] keeps
// the previous State per App and records what changed; the first State of
// an App after a start is compared with the newest entries held, so a
// restart records what changed while the console was down and nothing
// else. Other sources (history records, Warning Events, freezes) call
// [Store.Record].
//
// # Compaction and caps
//
// Per App, at most [Limits].PerApp entries (500) and MaxAge (30 days),
// whichever is smaller; the newest are kept. A flap (A->B, B->A, A->B of
// health, sync or drift inside FlapWindow, 5 minutes) folds into the first
// transition with a Count and Last, so a flapping App costs two entries per
// window. Repeats of a restart, OOM kill or crash loop of one container,
// or of one Warning (same message) of one object, fold into their
// episode's entry (its first time, Count so far, Last seen) for as long
// as the episode lasts: until nothing repeats for Limits.Quiet (10
// minutes) or the App's health changes. A fold changes the index (and is
// sent to subscribers) at once but does not make the shard pending: the
// shard is written when it is written for another reason, when the
// episode ends (Quiet passed), or Limits.FoldWrite (15 minutes) after the
// first unwritten fold, so a crash-looping App costs one write per 15
// minutes and a count is never behind in storage by more than that. A
// repeat that falls inside a folded span (the same Event read again after
// a restart) is counted once.
//
// # Storage
//
// Entries live in ConfigMaps ("shards") in deploy-web's namespace:
// deploy-web-timeline-000 to -255 ([DefaultShards]), labelled
// labels.Kind=timeline (deploy-web.hanzo.ai/kind). An App's shard is a hash of its
// cluster, namespace and name, so Apps spread evenly whatever the
// namespaces. A shard holds its Apps' entries as gzip-compressed columnar
// JSON (times as millisecond deltas): about 8.5 bytes per entry in the
// size model. A shard is at most [MaxShardBytes] (900 KiB) compressed; a
// fuller shard drops its oldest entries, never the newest, and counts
// them (Stats.Dropped). A shard that decompresses past [MaxShardDecoded]
// (a gzip bomb), is not this encoding or has columns of different lengths
// is refused as a whole and logged; one of another store's shard count is
// ignored.
//
// # Writes
//
// One replica writes: the Store writes only while Options.IsLeader says so
// (for example a leaderelection.LeaderElector on a Lease). Record marks the
// App's shard pending; the writer ticks ten times per FlushInterval (1s)
// and, once FlushInterval has passed since its last write, writes the one
// pending shard that has waited longest: one ConfigMap update (or create)
// per write, on the resourceVersion it last saw. Hence:
//
//   - no write at rest: nothing pending, nothing written; a crash loop
//     that repeats for ever costs its App one write per FoldWrite;
//   - at most one write per second fleet-wide under any churn (writes are
//     at least FlushInterval apart);
//   - a conflict (another writer) reads the shard, keeps the union of both
//     sides and writes it on a later tick, never a second write in the
//     same one.
//
// The price is latency to storage: an entry is in the index (and sent to
// subscribers) at once, and in its shard within (pending shards) seconds.
// At the size model's churn (10,000 Apps, 10 entries a day each: 1.2
// entries a second) an estimated 50 to 60 of the 256 shards wait at any
// time, so about a minute; with every shard pending (churn across the
// whole fleet) up to about 256s. A crash of the leader loses at most that
// much. A replica that does not lead keeps the entries it observes aside
// for Options.StandbyAge (2 minutes, at most Options.Standby entries);
// when it becomes the leader it writes those its predecessor had not
// written.
//
// # Reads
//
// Every replica serves reads from an in-memory index: loaded from the
// shards by Run, kept current by its own Records and by a watch of the
// shard ConfigMaps. A replica that does not lead replaces a shard's Apps
// with what the leader wrote, keeping the entries it observed itself that
// the leader has not written yet; the leader merges (the union).
// [Store.Query] returns one App's entries in a time range, oldest first;
// [Store.Fleet] the fleet's, filtered by cluster, namespace, App, kinds
// and time, newest first, paged by an opaque continue token.
// [Store.Subscribe] gives live entries through a bounded channel that
// drops the oldest waiting entry (counted) for a slow reader, for SSE.
//
// # Budgets (size model: 10 entries per App per day; see size_test.go)
//
//   - 10,000 Apps x 30 days: 3,000,000 entries, 24.3 MiB of shard data in
//     etcd (budget 200 MiB), 8.5 bytes per entry, the largest shard 132 KiB
//     (cap 900 KiB). Per 1,000 Apps per day: about 90 KiB when the shards
//     are as full as in that fleet, 214 KiB when 1,000 Apps alone spread
//     over 256 nearly empty shards (gzip's fixed cost per shard).
//   - Writes: 0 at rest, at most 1/s under churn (0.90/s measured with
//     2,000 Apps flapping for 20s, the first second included). Each write rewrites one shard, so etcd's
//     history until the apiserver compacts it (every 5 minutes) holds at
//     most 300 shard versions: 300 x 132 KiB, about 39 MiB for that fleet.
//   - The writer's CPU: 70 to 85 ms to encode a full shard (~40 Apps,
//     12,000 entries) per write, on a shared 2-core machine.
//   - Memory: the index holds every entry as a 104-byte record (its kind
//     one byte, its count four) with its strings interned per shard:
//     315 MiB for 3,000,000 entries (393 MiB with 120-byte records). The
//     records are nine tenths of it; their five string headers (80
//     bytes) are the next cut (ids into an intern table: about 48 bytes
//     a record). Loading 256 full shards took 13 to 21s on a shared
//     2-core machine; Query and Fleet wait for it (Ready).
//   - Fleet: the first page of 100 of 600,000 entries (2,000 Apps x 30
//     days) in 6 ms, of one namespace in 1.3 ms (BenchmarkFleet). It walks
//     each matching App's entries from the newest down to the page, so a
//     deep page costs more; Query reads one App's at most PerApp.
package timeline
