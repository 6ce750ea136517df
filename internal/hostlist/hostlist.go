// Package hostlist is the one rule for matching a host against an
// allowlist of hosts an administrator typed (registries, notification
// webhooks): exact host and port, ASCII letter case aside, and nothing
// outside printable ASCII.
package hostlist

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Canonical is the form hosts are compared in: ASCII lower case; ""
// (never listed) for a host with a byte outside printable ASCII. Unicode
// case folding is not used: strings.ToLower maps U+0130 (İ) and U+212A
// (the Kelvin sign) to ASCII letters, while net/http dials the name's
// IDNA form (xn--...), a different host, so a folded comparison would let
// data reach a domain nobody listed.
func Canonical(h string) string {
	if h == "" {
		return ""
	}
	b := []byte(h)
	for i, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			b[i] = c + ('a' - 'A')
		case c <= ' ' || c >= 0x7f:
			return ""
		}
	}
	return string(b)
}

// Lists reports whether host (a URL's Host: name or address and optional
// port) is one of hosts: host and port exactly ("hooks.example" does not
// list "hooks.example:8443"), ASCII letter case aside; a host with any
// other character is never listed.
func Lists(hosts []string, host string) bool {
	host = Canonical(host)
	if host == "" {
		return false
	}
	for _, h := range hosts {
		if Canonical(h) == host {
			return true
		}
	}
	return false
}

// Check says what is wrong with an allowlist entry: it must be a host (a
// DNS name, an IPv4 address or a bracketed IPv6 address) with an optional
// port, and nothing else.
func Check(h string) error {
	switch {
	case h == "":
		return errors.New("empty host")
	case strings.Contains(h, "://"):
		return fmt.Errorf("%q has a scheme: list the host alone (reg.example or reg.example:5000)", h)
	case strings.Contains(h, "@"):
		return fmt.Errorf("%q has userinfo: list the host alone", h)
	case strings.ContainsAny(h, "/?#"):
		return fmt.Errorf("%q has a path: list the host alone (reg.example or reg.example:5000)", h)
	}
	if Canonical(h) == "" {
		return fmt.Errorf("%q is not an ASCII host name: list an internationalised name in its IDNA form (xn--...)", h)
	}
	if strings.Count(h, ":") > 1 && !strings.HasPrefix(h, "[") {
		return fmt.Errorf("%q: an IPv6 address needs brackets ([::1]:5000)", h)
	}
	host, port := h, ""
	if i := strings.LastIndex(h, ":"); i >= 0 && (!strings.HasPrefix(h, "[") || strings.HasSuffix(h[:i], "]")) {
		host, port = h[:i], h[i+1:]
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
			return fmt.Errorf("%q has a bad port %q (1 to 65535)", h, port)
		}
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		if ip := net.ParseIP(host[1 : len(host)-1]); ip == nil || ip.To4() != nil {
			return fmt.Errorf("%q is not a valid IPv6 address", h)
		}
		return nil
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	if len(validation.IsDNS1123Subdomain(strings.ToLower(host))) > 0 {
		return fmt.Errorf("%q is not a valid host name (letters, digits, '-' and '.')", h)
	}
	return nil
}
