// Package deploy holds deploy-web's in-cluster manifests (kustomize: base/
// and overlays/example/) and, in its tests, the proof that they work with
// least privilege: applied to a real control plane, the service account can
// do what every dashboard flow needs and nothing more (no Secrets, no
// workload writes outside the environments' namespaces).
package deploy
