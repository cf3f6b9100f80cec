package webhooks

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// stubResolver answers from a table; no test looks a name up in DNS.
type stubResolver map[string][]string

func (s stubResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := s[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host (stub)", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, ip := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(ip)})
	}
	return out, nil
}

// dialLog records every address a client dials and connects only to 127.0.0.0/8.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (l *dialLog) dial(ctx context.Context, network, address string) (net.Conn, error) {
	l.mu.Lock()
	l.addrs = append(l.addrs, address)
	l.mu.Unlock()
	host, _, _ := net.SplitHostPort(address)
	if ip := net.ParseIP(host); ip == nil || ip.To4() == nil || !ip.IsLoopback() {
		return nil, errors.New("test dialer: not loopback, not connecting")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

func (l *dialLog) dialled() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.addrs...)
}

var stubDNS = stubResolver{
	"internal.example": {"10.20.30.40"},
	"home.example":     {"192.168.1.10"},
	"metadata.example": {"169.254.169.254"},
	"local.example":    {"127.0.0.1"},
	"mixed.example":    {"203.0.113.7", "10.0.0.1"},
	"v6local.example":  {"::1"},
	"v6ula.example":    {"fd00::1"},
}

// In live mode every internal target is refused before any connection is made: literal
// addresses and names resolving to them.
func TestLiveModeRefusesInternalAddressesBeforeConnecting(t *testing.T) {
	log := &dialLog{}
	client := newClient(guard{resolver: stubDNS, check: true, dial: log.dial}, 2*time.Second)
	for _, target := range []string{"127.0.0.1:8080", "10.1.2.3", "192.168.0.1", "169.254.169.254", "172.16.5.4",
		"[::1]", "internal.example", "home.example", "metadata.example", "local.example", "v6local.example", "v6ula.example"} {
		_, err := client.Post("https://"+target+"/hook", "application/json", strings.NewReader("{}"))
		if !errors.Is(err, ErrInternalAddress) {
			t.Errorf("%s: %v, want the internal-address refusal", target, err)
		}
	}
	// A name with a public and an internal address: only the public one is tried.
	_, _ = client.Post("https://mixed.example/hook", "application/json", strings.NewReader("{}"))
	if got := log.dialled(); len(got) != 1 || got[0] != "203.0.113.7:443" {
		t.Errorf("dialled %v, want only the public address of mixed.example", got)
	}
}

// The dialer's Control is the last word: a socket about to connect to an internal address
// is stopped even when resolution was bypassed.
func TestDialerControlRefusesInternalAddresses(t *testing.T) {
	g := guard{check: true}
	for _, addr := range []string{"127.0.0.1:80", "10.0.0.1:443", "192.168.1.1:443", "169.254.169.254:80", "[fe80::1]:443"} {
		if err := g.control("tcp", addr, nil); !errors.Is(err, ErrInternalAddress) {
			t.Errorf("control(%s) = %v, want a refusal", addr, err)
		}
	}
	if err := g.control("tcp", "203.0.113.7:443", nil); err != nil {
		t.Errorf("control of a public address: %v", err)
	}
	if err := (guard{}).control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("test mode control of loopback: %v", err)
	}
	// Through the real net.Dialer, resolution bypassed: Control refuses before connect.
	_, err := g.dialer()(context.Background(), "tcp", "127.0.0.1:9")
	if !errors.Is(err, ErrInternalAddress) {
		t.Errorf("dial of 127.0.0.1 in live mode: %v", err)
	}
}

// Redirects are never followed, whether to an internal address or anywhere else: the 3xx
// is the answer.
func TestRedirectsAreNotFollowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://metadata.example/latest/meta-data", http.StatusFound)
	}))
	defer srv.Close()
	for _, check := range []bool{false, true} {
		log := &dialLog{}
		resolver := stubResolver{"hooks.example": {"127.0.0.1"}, "metadata.example": {"169.254.169.254"}}
		client := newClient(guard{resolver: resolver, check: check, dial: log.dial}, 2*time.Second)
		port := srv.Listener.Addr().(*net.TCPAddr).Port
		resp, err := client.Post("http://hooks.example:"+itoaPort(port)+"/hook", "application/json", strings.NewReader("{}"))
		if check {
			if !errors.Is(err, ErrInternalAddress) {
				t.Errorf("live mode reached a loopback host: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("test mode: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Errorf("status %d, want the 302 itself", resp.StatusCode)
		}
		if got := log.dialled(); len(got) != 1 || !strings.HasPrefix(got[0], "127.0.0.1:") {
			t.Errorf("dialled %v: the redirect was followed", got)
		}
	}
}

func itoaPort(p int) string { return strconv.Itoa(p) }
