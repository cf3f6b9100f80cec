package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Resolver looks up the addresses of a host: net.DefaultResolver, or a stub in tests.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// DialFunc connects to a resolved address ("ip:port").
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// ErrInternalAddress is the refusal of a live-mode delivery to an internal address.
var ErrInternalAddress = errors.New("internal address refused in live mode (webhooks.allow_private)")

// guard resolves endpoint hosts itself and refuses, when checking, every internal
// address: at resolution, and again in the dialer's Control on the address the socket is
// about to connect to, so neither a host name resolving to an internal address nor a
// literal one gets through.
type guard struct {
	resolver Resolver
	check    bool
	dial     DialFunc // connects to an address already checked; nil: a net.Dialer with Control
}

func (g guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("webhook address %q: %w", addr, err)
	}
	ips, err := g.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		if g.check && Internal(ip) {
			errs = append(errs, fmt.Errorf("%s resolves to %s: %w", host, ip, ErrInternalAddress))
			continue
		}
		conn, err := g.dialer()(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func (g guard) lookup(ctx context.Context, host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	addrs, err := g.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	out := make([]net.IP, len(addrs))
	for i, a := range addrs {
		out[i] = a.IP
	}
	return out, nil
}

func (g guard) dialer() DialFunc {
	if g.dial != nil {
		return g.dial
	}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: g.control}
	return d.DialContext
}

// control runs after the socket is made and before it connects: the last word on the
// address.
func (g guard) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("dial %s: not an IP address", address)
	}
	if g.check && Internal(ip) {
		return fmt.Errorf("dial %s: %w", address, ErrInternalAddress)
	}
	return nil
}

// newClient returns the HTTP client of deliveries: no redirects followed (a 3xx is a
// failed attempt), no proxy from the environment, every address through the guard.
func newClient(g guard, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		DialContext:           g.dialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
