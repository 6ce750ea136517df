package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// inClusterNamespaceFile holds the pod's namespace in a cluster.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// historyNamespace picks the namespace of the plan-history ConfigMaps:
// --history-namespace, else deploy-web's own namespace ($POD_NAMESPACE,
// else the in-cluster service account's namespace file). Never a platform
// namespace by default: history written by deploy-web stays next to it.
// Outside a cluster with neither set it is an error naming the flag.
func historyNamespace(flagValue string, getenv func(string) string, readFile func(string) ([]byte, error)) (string, error) {
	ns, from := flagValue, "--history-namespace"
	if ns == "" {
		ns, from = strings.TrimSpace(getenv("POD_NAMESPACE")), "$POD_NAMESPACE"
	}
	if ns == "" {
		b, err := readFile(inClusterNamespaceFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("--history-namespace: read %s: %w", inClusterNamespaceFile, err)
		}
		if len(b) > 253 {
			b = b[:253]
		}
		ns, from = strings.TrimSpace(string(b)), inClusterNamespaceFile
	}
	if ns == "" {
		return "", errors.New("--history-namespace: required outside a cluster (the namespace deploy-web's plan history is kept in, usually deploy-web's own; or set $POD_NAMESPACE)")
	}
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return "", fmt.Errorf("--history-namespace: %q (from %s) is not a namespace: %s", ns, from, strings.Join(msgs, "; "))
	}
	return ns, nil
}
