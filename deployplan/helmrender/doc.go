// Package helmrender renders a Helm chart held in memory into Kubernetes
// objects, in-process, with the Helm Go SDK's chart loader and value
// coalescing and a bounded copy of its template engine. It has one job:
// chart files in, rendered objects (and warnings) out.
//
// It never runs a program (no helm binary), never opens a connection (no
// chart downloader, no registry, no `lookup` against a cluster, no DNS)
// and never reads the disk: the caller hands it the chart's files, read
// through its own rooted, size-capped reader. What Helm would do that
// cannot be done safely here is refused with an *Error naming the file
// and saying what to do:
//
//   - a dependency not vendored in the chart's charts/ folder (a `repo:`
//     URL, an OCI reference, a missing folder), a vendored one whose
//     version does not match Chart.yaml, or a Chart.lock out of step with
//     Chart.yaml;
//   - a values file, Chart.yaml, Chart.lock or rendered manifest over its
//     YAML budget (internal/yamlbudget: alias bombs, too many nodes);
//   - a values schema with a $ref (Helm's validator follows $ref to
//     http(s):// and file://; here every $ref is refused and no schema is
//     ever loaded from anywhere);
//   - a template that runs past its deadline, writes more than its output
//     cap, or makes its functions produce more than their budget: loops
//     (`range`, `until`, `untilStep`, `seq`), growth (`repeat`, `indent`,
//     doubling a string) and recursion (`include`, `tpl`, `template`) are
//     counted step by step on the rendering goroutine, which stops at the
//     first step over a bound; nothing is left running.
//
// What Helm cannot know here becomes a warning naming the template:
// `lookup` returns nothing and `getHostByName` returns "", and a template
// that draws random values or reads the clock renders differently every
// time (so a plan's drift would never settle).
//
// The engine code is adapted from helm.sh/helm/v4 pkg/engine (Apache 2.0):
// Helm's Engine writes every template into an unbounded strings.Builder
// and offers no way to stop a looping template, so it is not used.
package helmrender
