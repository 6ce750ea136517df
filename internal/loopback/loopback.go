// Package loopback says whether a host is this machine: the one rule for
// where plain, unauthenticated connections (http://, git://) may go.
package loopback

import (
	"net"
	"strings"
)

// Host reports whether host (a URL's Hostname(): no port, no brackets) is
// "localhost" (any letter case) or a loopback IP address (127.0.0.0/8,
// ::1).
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
