package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// trustedProxies are the networks of -trusted-proxies: the proxies whose
// X-Forwarded-For header serve believes.
type trustedProxies []netip.Prefix

func addTrustedProxiesFlag(fs *flag.FlagSet) *trustedProxies {
	p := new(trustedProxies)
	fs.Func("trusted-proxies", "comma-separated `addresses or networks` (CIDR) of reverse proxies whose X-Forwarded-For names the client (default none: the client is the connection's peer)", p.set)
	return p
}

// set parses the flag's value: IP addresses and CIDR networks.
func (p *trustedProxies) set(v string) error {
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(item); err == nil {
			*p = append(*p, pfx.Masked())
			continue
		}
		ip, err := netip.ParseAddr(item)
		if err != nil {
			return fmt.Errorf("%q is neither an IP address nor a CIDR network", item)
		}
		*p = append(*p, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
	}
	return nil
}

// trusts reports whether ip is the address of a trusted proxy.
func (p trustedProxies) trusts(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, pfx := range p {
		if pfx.Contains(ip) {
			return true
		}
	}
	return false
}

// wrap returns h behind the trusted proxies: a request whose peer is one
// of them has, as its RemoteAddr, the client that X-Forwarded-For names,
// so that the budgets, the log and everything else that looks at
// RemoteAddr see the client, not the proxy. The client is the rightmost
// address of X-Forwarded-For (all its lines, in order) that is not a
// trusted proxy: the addresses left of it were written by the client
// itself, or by proxies not trusted, and prove nothing. A request from
// any other peer, or without a usable X-Forwarded-For, keeps its
// RemoteAddr. Without trusted proxies wrap returns h.
func (p trustedProxies) wrap(h http.Handler) http.Handler {
	if len(p) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if client, ok := p.client(r); ok {
			r2 := new(http.Request)
			*r2 = *r
			r2.RemoteAddr = net.JoinHostPort(client.String(), "0")
			r = r2
		}
		h.ServeHTTP(w, r)
	})
}

// client returns the client that the X-Forwarded-For header of r names,
// when r comes from a trusted proxy.
func (p trustedProxies) client(r *http.Request) (netip.Addr, bool) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !p.trusts(peer.Addr()) {
		return netip.Addr{}, false
	}
	var hops []string
	for _, line := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(line, ",")...)
	}
	var client netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		ip, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // not an address: what is left of it cannot be believed
		}
		client = ip.Unmap()
		if !p.trusts(client) {
			break
		}
	}
	return client, client.IsValid()
}
