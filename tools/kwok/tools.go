//go:build tools

// Package kwok pins KWOK, the kubelet stand-in of the local development cluster.
package kwok

import _ "sigs.k8s.io/kwok/cmd/kwok"
