package query

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse"
)

// AnswerStore keeps encoded fleet answers for every kwhouse process (Redis). A store that
// fails behaves as an empty one: Get misses and SetFor drops the value.
type AnswerStore interface {
	Get(ctx context.Context, key string) ([]byte, bool)
	SetFor(ctx context.Context, key string, value []byte, ttl time.Duration)
}

// answerCache is the shared fleet answer cache (docs/costs.md, "Answer cache").
type answerCache struct {
	store    AnswerStore
	ttl      time.Duration
	maxBytes int
	served   atomic.Int64
	computed atomic.Int64
	stores   sync.WaitGroup // answers being stored (tests wait for them)
}

// answerStoreTimeout bounds the background store of one answer.
const answerStoreTimeout = 5 * time.Second

// UseAnswerCache makes FleetEncoded serve answers from s (nil: none) while the state
// token they were computed under is the token now, and keep each answer it computes of at
// most maxBytes there for ttl.
func (c *Pricer) UseAnswerCache(s AnswerStore, ttl time.Duration, maxBytes int) {
	if s == nil {
		c.answers = nil
		return
	}
	c.answers = &answerCache{store: s, ttl: ttl, maxBytes: maxBytes}
}

// AnswerCounts are the fleet answers FleetEncoded served from the answer cache and those
// it computed while the cache was on, since the process started.
type AnswerCounts struct{ Served, Computed int64 }

// AnswerCounts returns the answer cache's counts (zero when it is off).
func (c *Pricer) AnswerCounts() AnswerCounts {
	if c.answers == nil {
		return AnswerCounts{}
	}
	return AnswerCounts{Served: c.answers.served.Load(), Computed: c.answers.computed.Load()}
}

// FleetEncoded answers req as encode writes a FleetCost (format names the encoding): from
// the answer cache when its entry for the request was computed under the state token
// there is now (read before anything else, beside the entry), else computed by Fleet and
// kept in the background. A cache that fails or is off only means computing.
func (c *Pricer) FleetEncoded(ctx context.Context, scope kwhouse.Scope, req FleetRequest, format string,
	encode func(FleetCost) ([]byte, error)) ([]byte, error) {
	req.defaults()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	a := c.answers
	if a == nil {
		return c.fleetEncoded(ctx, scope, req, encode)
	}
	key := answerKey(scope, req, format)
	var cached []byte
	var found bool
	got := make(chan struct{})
	go func() { defer close(got); cached, found = a.store.Get(ctx, key) }()
	tok, tokErr := c.readFleetToken(ctx, scope, req)
	<-got
	if tokErr == nil && found {
		if body, ok := bytes.CutPrefix(cached, tok.bytes()); ok {
			a.served.Add(1)
			return body, nil
		}
	}
	a.computed.Add(1)
	body, err := c.fleetEncoded(ctx, scope, req, encode)
	if err != nil || tokErr != nil || len(body) > a.maxBytes {
		return body, err
	}
	a.stores.Add(1)
	go func() {
		defer a.stores.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerStoreTimeout)
		defer cancel()
		a.store.SetFor(sctx, key, append(tok.bytes(), body...), a.ttl)
	}()
	return body, nil
}

// fleetEncoded computes req's answer and encodes it.
func (c *Pricer) fleetEncoded(ctx context.Context, scope kwhouse.Scope, req FleetRequest,
	encode func(FleetCost) ([]byte, error)) ([]byte, error) {
	out, err := c.Fleet(ctx, scope, req)
	if err != nil {
		return nil, err
	}
	return encode(out)
}

// answerKey is the cache key of req's answer in scope as format: every field of the
// request (defaults filled in), the format and the release that encodes it.
func answerKey(scope kwhouse.Scope, req FleetRequest, format string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%t\x00%s\x00%d\x00%d\x00%s\x00%s\x00%s\x00%s\x00%t\x00%s\x00%s\x00%d\x00%s\x00%t\x00%t",
		answerRelease, scope.AccountID, scope.LiveMode, format, req.Start.UnixNano(), req.End.UnixNano(), req.Direction,
		req.Aggregation, req.GroupBy, req.CustomerID, req.LocationsSet, strings.Join(req.LocationIDs, ","), req.Order,
		req.Limit, req.StartingAfter, req.All, req.IncludeCharges)
	return "fleet-answer:" + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// answerFormat is bumped when the answer of the same request and data would change
// without a new build (it never has to be for a release: answerRelease names the build).
const answerFormat = 1

// answerRelease names the build that computes and encodes answers, so that a release never
// serves another's: its version control revision (and whether the tree was modified) or,
// without one, its module version.
var answerRelease = func() string {
	name := fmt.Sprintf("format %d", answerFormat)
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return name
	}
	name += " " + info.Main.Path + "@" + info.Main.Version + " " + info.GoVersion
	for _, s := range info.Settings {
		if strings.HasPrefix(s.Key, "vcs.") {
			name += " " + s.Key + "=" + s.Value
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			name += " " + executableStamp()
		}
	}
	return name
}()

// executableStamp tells apart builds of a modified tree, which share their revision: the
// executable's size and modification time (processes of one binary still share answers).
func executableStamp() string {
	path, err := os.Executable()
	if err != nil {
		return "executable unknown"
	}
	st, err := os.Stat(path)
	if err != nil {
		return "executable unknown"
	}
	return fmt.Sprintf("executable %d@%d", st.Size(), st.ModTime().UnixNano())
}
