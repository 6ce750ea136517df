// Package objrules holds the pure rules over Kubernetes objects that the
// console, the plan engine and the command line share: health (ArgoCD's
// per-kind rules, HealthOf, and the App's aggregate, AggregateHealth) and
// drift (the fields another manager changed after deploy-web's apply,
// Drift, with the values and the patch that heals them).
//
// Every function takes objects and returns values: no client, no cache,
// no clock beyond what the object says. kubeview applies them to its
// informer caches; deployplan to what a plan reads and an apply waits on.
package objrules
