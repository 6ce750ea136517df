// Package freeze holds deploy freezes: spans of time during which writes
// to part of the fleet are refused, each with a reason, an author and an
// end, stored in one ConfigMap and lapsing by themselves.
//
// # A freeze
//
// A [Freeze] has a [scope.Scope] (environments, clusters, namespaces, Apps:
// exact names or '*' patterns; at least one list), a Start, a required End
// and a Reason, optionally a Ticket (an http(s) URL) and a recurrence:
//
//   - One-off (no RRule): frozen from Start (inclusive) to End (exclusive);
//     End is at most [MaxWindow] (14 days) after Start.
//   - Recurring: RRule is an RFC 5545 recurrence rule and Duration the
//     length of each occurrence (at most MaxWindow). Occurrences start at
//     Start (DTSTART) and follow the rule; each is frozen from its start
//     (inclusive) for Duration, cut at End (exclusive). End bounds the whole
//     series and is at most [MaxSeries] (366 days) after Start, so a freeze
//     never outlives a year: nothing is frozen at or after End.
//
// Supported rule parts (anything else is an error): FREQ=DAILY, WEEKLY or
// MONTHLY; INTERVAL; BYDAY (MO..SU; in MONTHLY with an optional ordinal,
// 1FR first Friday, -1FR last Friday); BYHOUR; BYMINUTE; COUNT; UNTIL
// (20261231T235959Z in UTC, or a local 20261231T235959 or 20261231 in the
// freeze's zone). Without BYHOUR/BYMINUTE an occurrence keeps Start's time
// of day; WEEKLY without BYDAY keeps Start's weekday, MONTHLY without BYDAY
// Start's day of the month (months without it are skipped, as in RFC 5545).
// As in most implementations (python-dateutil, rrule-go), Start itself is
// an occurrence only when the rule produces it. Occurrences past
// [MaxOccurrences] make the freeze invalid, so evaluation is bounded
// whatever the rule says.
//
// Zone is an IANA time zone name ("Europe/Berlin"; empty is UTC), loaded
// with time.LoadLocation (the time/tzdata fallback is linked in). A rule's
// wall-clock times (BYHOUR, BYMINUTE, Start's time of day) are read in that
// zone, so a daily 18:00 Europe/Berlin freeze starts at 18:00 Berlin time in
// summer and winter alike; Start and End themselves are instants. A
// wall-clock time that does not exist on a day (inside the hour skipped
// when summer time starts) moves as Go's time.Date moves it.
//
// # Deciding
//
// A [List] is the freezes in force. [List.Active] says whether a target is
// frozen at an instant and when it opens (chained: a freeze that starts as
// another ends keeps it frozen). [List.Check] is the decision for an
// [Action]: apply, sync, rollback, promote, auto-sync and operate (a day-2
// action) are refused with a
// [*FrozenError] ("frozen until 2026-12-03 18:00 UTC by alice@example.com:
// release week"); plan is always allowed. A target field left empty means
// "all of them" here ([scope.Scope.Touches]): applying a whole environment
// is refused by a freeze on one of its Apps.
//
// Break-glass: [List.BreakGlass] lets one action through a freeze when the
// caller's role decision says the person is a superadmin, with a required
// reason, and returns the [Override] the caller must record (audit).
//
// # Storing
//
// A [Store] keeps the freezes as JSON in one ConfigMap,
// [ConfigMapName] in deploy-web's namespace. Add and Remove read, change and
// update it on its resourceVersion, retrying on a conflict, so two writers
// never lose each other's change. It holds at most [MaxFreezes] freezes and
// [MaxStoreBytes] of JSON. A freeze lapses by itself: Active is computed
// from times, nothing needs to be written when a freeze ends. [Store.Prune]
// removes lapsed freezes; run it from one replica (under a Lease).
package freeze
