//go:build tools

// Package kube pins the Kubernetes control-plane commands that the local
// development cluster (devcluster) runs. It is a module of its own because
// k8s.io/kubernetes replaces its staging modules with local folders.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
