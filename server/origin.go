package server

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// A local server with no token must not be usable by the web pages its user
// opens. Two checks close that (docs/api.md, "Security"):
//
//   - DNS rebinding: a page on evil.example whose name is made to resolve to
//     127.0.0.1 talks to the server as same-origin, but its requests carry
//     "Host: evil.example". Requests whose Host is not one of the server's
//     own names are refused, whatever their method: reads too, since the
//     page could otherwise read every study.
//   - Cross-site writes: a page may send a POST to any address without
//     asking first ("simple" requests: a form's or fetch's text/plain body).
//     Writes must therefore come without an Origin (programs) or from the
//     server's own origin, and a body must be declared JSON, which no
//     simple request can do without the browser asking the server first (a
//     preflight, which this server never answers with permission).

// hostPolicy says which Host headers name this server.
type hostPolicy struct {
	names   map[string]bool // lower-case host names and IP literals, no port
	anyIP   bool            // bound to an unspecified address: any IP literal
	any     bool            // "*" among the allowed hosts: no check
	origins map[string]bool // the allowed hosts named one by one: trusted pages too
}

// newHostPolicy builds the policy for a server listening on addr (host:port
// as given to net.Listen; empty for a server that is not listening itself,
// e.g. one called in process) with further allowed host names.
func newHostPolicy(addr string, allowed []string) (hostPolicy, error) {
	p := hostPolicy{names: map[string]bool{"localhost": true}, origins: map[string]bool{}}
	if addr != "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return hostPolicy{}, fmt.Errorf("listen address %q: %w", addr, err)
		}
		ip := net.ParseIP(host)
		switch {
		case host == "" || (ip != nil && ip.IsUnspecified()):
			// The server's own addresses are every address of every
			// interface, which change (DHCP, VPNs) and are not all known
			// here; an IP literal cannot be rebound by DNS, so any is
			// accepted. Names must be listed.
			p.anyIP = true
		default:
			p.names[normalHost(host)] = true
		}
	}
	for _, h := range allowed {
		h = strings.TrimSpace(h)
		switch {
		case h == "*":
			p.any = true
		case h == "" || strings.ContainsAny(h, "/ @?#") || strings.Contains(h, "://"):
			return hostPolicy{}, fmt.Errorf("allowed host %q: want a host name or IP address without scheme or path (or * for any)", h)
		default:
			// A port given with the name is dropped: hosts are compared
			// without theirs.
			p.names[hostOf(h)] = true
			p.origins[hostOf(h)] = true
		}
	}
	return p, nil
}

// normalHost lower-cases a host name and drops the brackets of an IPv6
// literal and a trailing dot, so that equal names compare equal.
func normalHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// hostOf is the host part of a Host header or an origin's host[:port].
func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return normalHost(h)
	}
	return normalHost(hostport)
}

// allows reports whether a request's Host header names this server. An
// empty Host (HTTP/1.0) comes from a program, never from a browser.
func (p hostPolicy) allows(hostHeader string) bool {
	if p.any || hostHeader == "" {
		return true
	}
	h := hostOf(hostHeader)
	if p.names[h] {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || p.anyIP)
}

// refuse answers a request for another host name.
func (p hostPolicy) refuse(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusMisdirectedRequest, fmt.Errorf(
		"host %q is not this server's name: only its listen address, localhost and loopback addresses are accepted, and further names when allowed (xbo serve --allowed-hosts)", r.Host))
}

// checkWrite refuses a write that a browser may have sent on behalf of
// another site: an Origin other than the request's own host (or a host
// named in the allowed hosts: a page served there through a proxy), and a
// body that is not declared JSON. A bodiless write (an ask with no options)
// needs no Content-Type: the Go and Python clients send none then, and a
// browser's cross-site one carries an Origin.
func (p hostPolicy) checkWrite(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		// Same-origin is the same host and port; the scheme is not
		// compared, since a TLS proxy in front changes it.
		same := err == nil && u.Host != "" && (strings.EqualFold(u.Host, r.Host) || p.origins[hostOf(u.Host)])
		if !same {
			return &httpError{http.StatusForbidden, fmt.Errorf("cross-origin write from %q refused: writes are accepted from programs (no Origin header) and from the server's own pages only", o)}
		}
	}
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return &httpError{http.StatusUnsupportedMediaType, fmt.Errorf("Content-Type %q refused: a request body must be sent as application/json", ct)}
	}
	return nil
}
