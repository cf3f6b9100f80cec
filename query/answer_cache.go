package query

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/writemarks"
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
	marks    *writemarks.Marks // nil: every answer served is checked against its token
	ttl      time.Duration
	maxBytes int
	served   atomic.Int64
	computed atomic.Int64
	stores   sync.WaitGroup // answers being stored (tests wait for them)
}

// answerStoreTimeout bounds the background store of one answer.
const answerStoreTimeout = 5 * time.Second

// UseAnswerCache makes FleetAnswer serve answers from s (nil: none) while the state
// token they were computed under is the token now, and keep each answer it computes whose
// gzip stream is at most maxBytes there for ttl. With marks (the write marks of every
// writer of the deployment, on the Redis of s) an answer is served without reading its
// token while no write of its scope began since (docs/costs.md, "Write marks").
func (c *Pricer) UseAnswerCache(s AnswerStore, marks *writemarks.Marks, ttl time.Duration, maxBytes int) {
	if s == nil {
		c.answers = nil
		return
	}
	c.answers = &answerCache{store: s, marks: marks, ttl: ttl, maxBytes: maxBytes}
}

// AnswerCounts are the fleet answers FleetAnswer served from the answer cache and those
// it computed while the cache was on, since the process started.
type AnswerCounts struct{ Served, Computed int64 }

// AnswerCounts returns the answer cache's counts (zero when it is off).
func (c *Pricer) AnswerCounts() AnswerCounts {
	if c.answers == nil {
		return AnswerCounts{}
	}
	return AnswerCounts{Served: c.answers.served.Load(), Computed: c.answers.computed.Load()}
}

// FleetEncoded answers req as FleetAnswer does, as the bytes encode wrote.
func (c *Pricer) FleetEncoded(ctx context.Context, scope kwhouse.Scope, req FleetRequest, format string,
	encode func(FleetCost) ([]byte, error)) ([]byte, error) {
	ans, err := c.FleetAnswer(ctx, scope, req, format, encode)
	if err != nil {
		return nil, err
	}
	return ans.Plain()
}

// FleetAnswer answers req as encode writes a FleetCost (format names the encoding): from
// the answer cache when its entry for the request was stored with the scope's write epoch
// there is now and no write of the scope is pending (no ClickHouse statement), or else was
// computed under the state token there is now; otherwise computed by Fleet and kept in the
// background while the token is unchanged (keep). The token of a later page by id is its
// own locations' (servePage), any other answer's the whole scope's. The entry and the
// epoch are read first, in one Redis round trip: an entry is stored with the epoch read
// before the token it was computed or confirmed under. A cache that fails or is off only
// means computing.
func (c *Pricer) FleetAnswer(ctx context.Context, scope kwhouse.Scope, req FleetRequest, format string,
	encode func(FleetCost) ([]byte, error)) (*Answer, error) {
	req.defaults()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	a := c.answers
	if a == nil {
		_, ans, err := c.fleetEncoded(ctx, scope, req, encode)
		return ans, err
	}
	key := answerKey(scope, req, format)
	cached, epoch := a.look(ctx, key, scope)
	if cached.found && epoch != 0 && cached.epoch == epoch {
		a.served.Add(1)
		return storedAnswer(cached.gz), nil
	}
	if lo, ok := laterPage(req); ok {
		return c.servePage(ctx, scope, req, key, lo, cached, epoch, encode)
	}
	tok, tokErr := c.readFleetToken(ctx, scope, req)
	if cached.found && tokErr == nil && cached.tok == tok {
		a.served.Add(1)
		a.confirm(ctx, key, cached, epoch)
		return storedAnswer(cached.gz), nil
	}
	a.computed.Add(1)
	_, ans, err := c.fleetEncoded(ctx, scope, req, encode)
	if err != nil || tokErr != nil {
		return ans, err
	}
	a.keep(ctx, key, answerEntry{epoch: epoch, tok: tok}, ans, func(ctx context.Context) (fleetToken, error) {
		return c.readFleetToken(ctx, scope, req)
	})
	return ans, nil
}

// look reads key's entry and scope's write epoch (0: none can vouch for an entry).
func (a *answerCache) look(ctx context.Context, key string, scope kwhouse.Scope) (answerEntry, writemarks.Epoch) {
	var b []byte
	var found bool
	var epoch writemarks.Epoch
	if a.marks != nil {
		b, found, epoch = a.marks.Look(ctx, key, scope)
	} else {
		b, found = a.store.Get(ctx, key)
	}
	e, ok := parseEntry(b)
	e.found = found && ok
	return e, epoch
}

// confirm stores again, in the background, an entry its token confirmed, with the epoch
// read before that token: the next request is served without the token.
func (a *answerCache) confirm(ctx context.Context, key string, e answerEntry, epoch writemarks.Epoch) {
	if epoch == 0 || epoch == e.epoch {
		return
	}
	e.epoch = epoch
	a.keep(ctx, key, e, storedAnswer(e.gz), nil)
}

// laterPage returns the cursor's location of a later page by id of every location of the
// scope: such a page is made from the locations from there on (fleetPage), so the token it
// is kept under is theirs. A page of named locations or of a customer's also reads whether
// each exists, so it keeps the whole scope's token.
func laterPage(req FleetRequest) (string, bool) {
	if !pagedByID(req) || req.StartingAfter == "" || req.LocationsSet || req.CustomerID != "" {
		return "", false
	}
	cur, _ := parseCursor(req.StartingAfter) // checked in Validate
	return cur.key.group, true
}

// servePage answers the later page by id req, whose cursor is at location lo, from its
// entry cached (read with the epoch) when the token of the locations the entry names (its
// span) is the one it was computed under; else it reads the token of every location from
// lo on, computes the page, and keeps it under the token of its span, known once it is
// computed. The entry is read first (its span says which token to read): one read of the
// span's few locations, not of the whole scope, serves a page.
func (c *Pricer) servePage(ctx context.Context, scope kwhouse.Scope, req FleetRequest, key, lo string,
	cached answerEntry, epoch writemarks.Epoch, encode func(FleetCost) ([]byte, error)) (*Answer, error) {
	a := c.answers
	if cached.found {
		cached.span.lo = lo
		if tok, err := c.readPageToken(ctx, scope, req, cached.span); err == nil && tok == cached.tok {
			a.served.Add(1)
			a.confirm(ctx, key, cached, epoch)
			return storedAnswer(cached.gz), nil
		}
	}
	a.computed.Add(1)
	toks, tokErr := c.readTokensFrom(ctx, scope, req, lo)
	out, ans, err := c.fleetEncoded(ctx, scope, req, encode)
	if err != nil || tokErr != nil {
		return ans, err
	}
	span := pageSpan{lo: lo}
	if out.HasMore {
		span.hi, span.next = out.Data[len(out.Data)-1].key.group, out.after
	}
	a.keep(ctx, key, answerEntry{epoch: epoch, span: span, tok: toks.tokenOf(span)}, ans, func(ctx context.Context) (fleetToken, error) {
		return c.readPageToken(ctx, scope, req, span)
	})
	return ans, nil
}

// fleetEncoded computes req's answer and encodes it.
func (c *Pricer) fleetEncoded(ctx context.Context, scope kwhouse.Scope, req FleetRequest,
	encode func(FleetCost) ([]byte, error)) (FleetCost, *Answer, error) {
	out, err := c.Fleet(ctx, scope, req)
	if err != nil {
		return out, nil, err
	}
	body, err := encode(out)
	if err != nil {
		return out, nil, err
	}
	return out, computedAnswer(body), nil
}

// answerEntry is an answer as the cache keeps it: the scope's write epoch read before the
// token it was computed or confirmed under (0: none), the span of locations a later page
// by id reads (none for other answers), that token and the answer's gzip stream.
type answerEntry struct {
	found bool // read from the cache (not stored)
	epoch writemarks.Epoch
	span  pageSpan // lo is the request's
	tok   fleetToken
	gz    []byte
}

// bytes is e as stored: the epoch, hi and next, each after its length, then the token and
// the gzip stream.
func (e answerEntry) bytes() []byte {
	b := make([]byte, 0, 8+2*binary.MaxVarintLen64+len(e.span.hi)+len(e.span.next)+8*len(e.tok)+len(e.gz))
	b = binary.BigEndian.AppendUint64(b, uint64(e.epoch))
	b = append(binary.AppendUvarint(b, uint64(len(e.span.hi))), e.span.hi...)
	b = append(binary.AppendUvarint(b, uint64(len(e.span.next))), e.span.next...)
	return append(append(b, e.tok.bytes()...), e.gz...)
}

// parseEntry reads an entry as bytes wrote it.
func parseEntry(b []byte) (answerEntry, bool) {
	var e answerEntry
	if len(b) < 8 {
		return e, false
	}
	e.epoch, b = writemarks.Epoch(binary.BigEndian.Uint64(b)), b[8:]
	str := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	var ok1, ok2 bool
	e.span.hi, ok1 = str()
	e.span.next, ok2 = str()
	if !ok1 || !ok2 || len(b) < 8*len(e.tok) {
		return e, false
	}
	for i := range e.tok {
		e.tok[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	e.gz = b[8*len(e.tok):]
	return e, true
}

// keep stores e with ans's gzip stream under key in the background, when the stream is at
// most maxBytes and the token read again (again) once the answer was computed is still
// e.tok. On one server that drops only entries that would never be served (the counts only
// grow); on a cluster it drops an answer whose reads moved to a replica that lacked a write
// e.tok counts (docs/costs.md, "Answer cache"). The read and the compression run after the
// answer is sent. Without again (an entry its token just confirmed) e is stored as it is.
func (a *answerCache) keep(ctx context.Context, key string, e answerEntry, ans *Answer,
	again func(context.Context) (fleetToken, error)) {
	a.stores.Add(1)
	go func() {
		defer a.stores.Done()
		sctx, cancel := afterAnswer(ctx, answerStoreTimeout)
		defer cancel()
		if again != nil {
			if tok, err := again(sctx); err != nil || tok != e.tok {
				return
			}
		}
		gz, err := ans.gzipped()
		if err != nil || len(gz) > a.maxBytes {
			return
		}
		e.gz = gz
		a.store.SetFor(sctx, key, e.bytes(), a.ttl)
	}()
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
// without a new build, and when the entry's layout changes (3: it holds the answer's gzip
// stream): answerRelease names a release's build, but a build without version control
// information only by its module version, which the builds before it share.
const answerFormat = 3

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
