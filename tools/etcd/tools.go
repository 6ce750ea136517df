//go:build tools

// Package etcd pins the etcd server that the local development cluster runs.
package etcd

import _ "go.etcd.io/etcd/server/v3"
