// Package kubeview is everything deploy-web reads from the cluster: informer
// caches scoped to the platform namespaces, the application list (rows with
// ArgoCD-parity health, versions and the sync verdict, kept up to date as
// events arrive), the owner tree, the closed kind registry, refs and logs.
// The health and drift rules it applies are pure functions of package
// objrules, which the plan engine and the command line call without an
// informer cache.
//
// It renders no HTML and knows nothing about HTTP; callers get plain values.
package kubeview
