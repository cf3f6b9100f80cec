package testkit

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of a store, so a test can take the store away from the
// service (Down) and give it back (Up) without touching the server other tests use.
type Proxy struct {
	target string
	ln     net.Listener
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
}

// NewProxy listens on a free loopback port and forwards to target until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.Down() })
	return p
}

// Addr is the address to give the service instead of the store's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Down cuts every open connection and refuses new ones, as a stopped server would.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Up lets connections through again.
func (p *Proxy) Up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		client.Close()
		return
	}
	p.mu.Unlock()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// Proxies stand in front of every node of a comma-separated address list (a cluster):
// Down takes all of them away, as if the whole store were gone.
type Proxies []*Proxy

// NewProxies starts a proxy for each address of addrs.
func NewProxies(t testing.TB, addrs string) Proxies {
	t.Helper()
	var out Proxies
	for _, a := range strings.Split(addrs, ",") {
		out = append(out, NewProxy(t, strings.TrimSpace(a)))
	}
	return out
}

// Addr is the comma-separated list of the proxies' addresses, in order.
func (ps Proxies) Addr() string {
	addrs := make([]string, len(ps))
	for i, p := range ps {
		addrs[i] = p.Addr()
	}
	return strings.Join(addrs, ",")
}

// Down takes every node away.
func (ps Proxies) Down() {
	for _, p := range ps {
		p.Down()
	}
}

// Up gives every node back.
func (ps Proxies) Up() {
	for _, p := range ps {
		p.Up()
	}
}
