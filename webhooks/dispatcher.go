package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/docstore"
)

// Leaser takes leases shared by every kwhouse process (rediscache.Cache), many in one
// round trip: unlocks[i] is nil when the i-th is held elsewhere; ok is false (nothing
// taken) when the lease store is down.
type Leaser interface {
	LockMany(ctx context.Context, keys []string, ttl time.Duration) (unlocks []func(), ok bool)
}

// DispatcherOptions are what tests and benchmarks replace; the zero value is production's.
type DispatcherOptions struct {
	Now      func() time.Time // the clock of schedules and signatures; time.Now when nil
	Resolver Resolver         // host look-ups; net.DefaultResolver when nil
	Dial     DialFunc         // connects to checked addresses; a net.Dialer when nil
}

// Dispatcher reads new events from the outbox, turns them into deliveries (one per
// subscribed endpoint, stored before any attempt) and makes the attempts on the retry
// schedule. Every process may run one: a lease per attempt keeps two from making the same
// attempt, and the deliveries table keeps the work of a stopped process for the others.
type Dispatcher struct {
	store     *Store
	docs      *docstore.Store
	service   *Service
	leases    Leaser
	cfg       config.Webhooks
	now       func() time.Time
	log       *slog.Logger
	live      *http.Client // live-mode deliveries: internal addresses refused
	test      *http.Client // test-mode deliveries
	endpoints *endpointCache
	states    *groupWriter // new deliveries and attempts' outcomes, written in groups

	// Read and written by RunOnce only.
	pos       int64            // newest outbox creation time read
	savedPos  int64            // position last stored in webhook_cursor
	seen      map[string]int64 // events read within the overlap, by id: skipped when read again
	lastSweep time.Time
	started   bool

	mu          sync.Mutex
	queue       map[string]*item // pending deliveries this process will attempt, by delivery id
	inflight    map[string]bool
	perEndpoint map[string]int     // attempts in flight, by endpoint
	queued      map[string]int     // queue entries, by endpoint
	made        map[string]int64   // events whose deliveries the fast path made and stored, by id
	fresh       chan []outboxEvent // new events written by this process (fast.go)
	slots       chan struct{}
	wake        chan struct{} // deliveries queued or a sender free: dispatch now
	wg          sync.WaitGroup
}

// item is a pending delivery: its last stored state and, when at hand, the event body.
type item struct {
	st      state
	body    []byte
	polled  bool // made by this process from the outbox, not yet attempted
	sending bool // holds a sender slot
}

// fresh reports whether it is a first attempt read from the outbox since recent.
func (it *item) fresh(recent int64) bool {
	return it.polled && it.st.Attempt == 0 && it.st.CreatedUS >= recent
}

// NewDispatcher returns a dispatcher for the endpoints of service.
func NewDispatcher(store *Store, service *Service, leases Leaser, cfg config.Webhooks, log *slog.Logger, opt DispatcherOptions) *Dispatcher {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Resolver == nil {
		opt.Resolver = net.DefaultResolver
	}
	d := &Dispatcher{store: store, docs: service.docs, service: service, leases: leases, cfg: cfg, now: opt.Now, log: log,
		live:      newClient(guard{resolver: opt.Resolver, check: !cfg.AllowPrivate, dial: opt.Dial}, cfg.Timeout),
		test:      newClient(guard{resolver: opt.Resolver, dial: opt.Dial}, cfg.Timeout),
		endpoints: newEndpointCache(service.docs, cfg.EndpointCacheTTL, opt.Now),
		states:    &groupWriter{write: store.write, interval: cfg.WriteInterval},
		seen:      map[string]int64{}, made: map[string]int64{}, fresh: make(chan []outboxEvent, fastQueue),
		queue: map[string]*item{}, inflight: map[string]bool{},
		perEndpoint: map[string]int{}, queued: map[string]int{}, slots: make(chan struct{}, cfg.Concurrency),
		wake: make(chan struct{}, 1)}
	service.SetDispatcher(d)
	service.docs.OnWrite(d.written)
	return d
}

// Run reads the outbox every webhooks.poll_interval until ctx ends, and starts attempts
// in a loop of its own (woken by new deliveries and by freed senders, so slow outbox reads
// and writes never hold attempts back); at the end it waits for the attempts in flight
// (cut short: they are not recorded, and are made again later).
func (d *Dispatcher) Run(ctx context.Context) {
	done := make(chan struct{})
	go func() { d.dispatchLoop(ctx); close(done) }()
	go d.fastLoop(ctx)
	t := time.NewTicker(d.cfg.PollInterval)
	defer t.Stop()
	failing := false
	for {
		err := d.collect(ctx)
		if err != nil && ctx.Err() == nil {
			if !failing {
				d.log.Warn("webhook dispatch failed; retrying", "err", err)
			}
			failing = true
		} else if failing && err == nil {
			d.log.Info("webhook dispatch recovered")
			failing = false
		}
		d.signal()
		select {
		case <-ctx.Done():
			<-done
			d.Wait()
			return
		case <-t.C:
		}
	}
}

// dispatchLoop starts due attempts whenever woken, and at least every poll interval
// (retries coming due).
func (d *Dispatcher) dispatchLoop(ctx context.Context) {
	t := time.NewTicker(d.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.wake:
		}
		if err := d.dispatch(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("webhook dispatch failed", "err", err)
		}
	}
}

// Wait waits for the attempts in flight.
func (d *Dispatcher) Wait() { d.wg.Wait() }

// RunOnce reads new events into deliveries, looks for stored due retries when a sweep is
// due, and starts the attempts that are due (without waiting for them).
func (d *Dispatcher) RunOnce(ctx context.Context) error {
	if err := d.collect(ctx); err != nil {
		return err
	}
	return d.dispatch(ctx)
}

// collect turns new outbox events into queued deliveries and, when a sweep is due, queues
// the stored ones that are due.
func (d *Dispatcher) collect(ctx context.Context) error {
	if err := d.start(ctx); err != nil {
		return err
	}
	if err := d.poll(ctx); err != nil {
		return err
	}
	if d.now().Sub(d.lastSweep) >= d.cfg.SweepInterval {
		return d.sweep(ctx)
	}
	return nil
}

// start reads the shared outbox position once: a new deployment starts from now.
func (d *Dispatcher) start(ctx context.Context) error {
	if d.started {
		return nil
	}
	pos, err := d.store.readCursor(ctx)
	if err != nil {
		return err
	}
	if pos == 0 {
		pos = d.now().UnixMicro()
	}
	d.pos, d.savedPos, d.started = pos, pos, true
	return nil
}

// sweep queues stored deliveries that are due: retries too far off to be kept in memory,
// and the work of processes that stopped.
func (d *Dispatcher) sweep(ctx context.Context) error {
	now := d.now()
	due, err := d.store.due(ctx, now.Add(-sweepLookback), now, d.cfg.Batch, d.cfg.Batch)
	if err != nil {
		return err
	}
	if len(due) < d.cfg.Batch {
		d.lastSweep = now // a full answer: sweep again at the next turn
	}
	for _, st := range due {
		d.enqueue(&item{st: st})
	}
	return nil
}

// enqueue keeps a pending delivery in memory unless it is there or in flight already, or
// its endpoint has webhooks.batch queued (the rest wait, stored, for a sweep).
func (d *Dispatcher) enqueue(it *item) {
	d.mu.Lock()
	defer d.mu.Unlock()
	id := it.st.DeliveryID
	if d.inflight[id] {
		return
	}
	if old, ok := d.queue[id]; ok {
		if old.st.Attempt >= it.st.Attempt {
			return
		}
		d.queue[id] = it
		return
	}
	if d.queued[it.st.EndpointID] >= d.cfg.Batch {
		return
	}
	d.queue[id] = it
	d.queued[it.st.EndpointID]++
}

func (d *Dispatcher) dequeue(id string) {
	if it, ok := d.queue[id]; ok {
		delete(d.queue, id)
		if d.queued[it.st.EndpointID]--; d.queued[it.st.EndpointID] <= 0 {
			delete(d.queued, it.st.EndpointID)
		}
	}
}

// enqueueNew makes a delivery the API just stored (test, resend) go out at the next turn.
func (d *Dispatcher) enqueueNew(st state, body []byte) { d.enqueue(&item{st: st, body: body}) }

// dueItems returns the queued deliveries due now whose endpoint has a sender free,
// soonest first (a dead endpoint's backlog is passed over, not sorted, at every turn).
func (d *Dispatcher) dueItems() []*item {
	now := d.now().UnixMicro()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.slots) == cap(d.slots) {
		return nil
	}
	var out []*item
	for id, it := range d.queue {
		// In flight: its outcome is still being stored.
		if it.st.NextUS <= now && !d.inflight[id] && d.perEndpoint[it.st.EndpointID] < d.cfg.EndpointConcurrency {
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].st.NextUS < out[j].st.NextUS })
	return out
}

// leaseTTL outlasts an attempt: the timeout, the write of its outcome, and slack.
func (d *Dispatcher) leaseTTL() time.Duration { return 2*d.cfg.Timeout + 5*time.Second }

func leaseKey(st state) string {
	return fmt.Sprintf("webhook-attempt:%s:%d", st.DeliveryID, st.Attempt+1)
}

// claimed is a due delivery whose next attempt this process holds the lease of.
type claimed struct {
	it     *item
	unlock func()
}

// dispatch leases the due deliveries there are senders for (in one round trip), drops
// those another process holds, and starts the rest: first attempts read from the outbox
// moments ago at once, the others once a read of their stored attempts (and event bodies)
// shows no other process has made them meanwhile. That read runs beside the loop, so a
// slow ClickHouse or a dead endpoint's retries never hold back the other deliveries.
func (d *Dispatcher) dispatch(ctx context.Context) error {
	var items []*item
	var keys []string
	for _, it := range d.dueItems() {
		if d.reserve(it) {
			items, keys = append(items, it), append(keys, leaseKey(it.st))
		}
	}
	if len(items) == 0 {
		return nil
	}
	unlocks, ok := d.leases.LockMany(ctx, keys, d.leaseTTL())
	var got []claimed
	for i, it := range items {
		switch {
		case !ok:
			d.release(it, false) // no lease store: wait for it rather than risk a double attempt
		case unlocks[i] == nil:
			d.release(it, true) // another process holds it; a sweep finds it if that one stops
		default:
			got = append(got, claimed{it: it, unlock: unlocks[i]})
		}
	}
	recent := d.now().Add(-d.leaseTTL() / 2).UnixMicro()
	var check []claimed
	for _, c := range got {
		if c.it.fresh(recent) && c.it.body != nil {
			d.wg.Add(1)
			go d.attempt(ctx, c)
		} else {
			check = append(check, c)
		}
	}
	if len(check) > 0 {
		d.wg.Add(1)
		go d.checkThenAttempt(ctx, check)
	}
	return nil
}

// checkThenAttempt starts the claims no other process has attempted meanwhile.
func (d *Dispatcher) checkThenAttempt(ctx context.Context, claims []claimed) {
	defer d.wg.Done()
	todo, err := d.unattempted(ctx, claims)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("webhook dispatch: read stored attempts", "err", err)
		}
		return
	}
	d.fillBodies(ctx, todo)
	for _, c := range todo {
		d.wg.Add(1)
		go d.attempt(ctx, c)
	}
}

// reserve takes a sender slot for it (the process's and its endpoint's); false when none
// is free.
func (d *Dispatcher) reserve(it *item) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inflight[it.st.DeliveryID] || d.perEndpoint[it.st.EndpointID] >= d.cfg.EndpointConcurrency {
		return false
	}
	select {
	case d.slots <- struct{}{}:
	default:
		return false
	}
	d.perEndpoint[it.st.EndpointID]++
	d.inflight[it.st.DeliveryID] = true
	it.sending = true
	return true
}

// freeSender gives back it's sender slot once its HTTP exchange is over (its outcome may
// still be on its way to ClickHouse: the delivery stays in flight until it is stored).
func (d *Dispatcher) freeSender(it *item) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !it.sending {
		return
	}
	it.sending = false
	<-d.slots
	if d.perEndpoint[it.st.EndpointID]--; d.perEndpoint[it.st.EndpointID] <= 0 {
		delete(d.perEndpoint, it.st.EndpointID)
	}
}

// release ends it's turn in flight; drop forgets the delivery in this process.
func (d *Dispatcher) release(it *item, drop bool) {
	d.freeSender(it)
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.inflight, it.st.DeliveryID)
	if drop {
		d.dequeue(it.st.DeliveryID)
	}
}

// unattempted keeps the claims whose delivery has no attempt past the one queued: read
// after the leases are taken, it sees every attempt another process has finished. A first
// attempt this process read from the outbox moments ago needs no read: its lease is held
// until it expires, so no other process can have made that attempt.
func (d *Dispatcher) unattempted(ctx context.Context, got []claimed) ([]claimed, error) {
	var eps, ids []string
	recent := d.now().Add(-d.leaseTTL() / 2).UnixMicro()
	for _, c := range got {
		if !c.it.fresh(recent) {
			eps, ids = append(eps, c.it.st.EndpointID), append(ids, c.it.st.DeliveryID)
		}
	}
	if len(ids) == 0 {
		return got, nil
	}
	last, err := d.store.lastAttempts(ctx, eps, ids)
	if err != nil {
		for _, c := range got {
			c.unlock()
			d.release(c.it, false)
		}
		return nil, err
	}
	var out []claimed
	for _, c := range got {
		if n, ok := last[c.it.st.DeliveryID]; ok && n > c.it.st.Attempt {
			d.release(c.it, true)
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// fillBodies reads, in one query, the event bodies of claimed fan-out deliveries found by
// a sweep: their creation time is the event's, so the outbox finds them by its sorting
// key. The others (resends, tests, or when this read fails) read their event on their own.
func (d *Dispatcher) fillBodies(ctx context.Context, claims []claimed) {
	var created []int64
	var ids []string
	for _, c := range claims {
		st := c.it.st
		if c.it.body == nil && st.DeliveryID == deliveryID(st.EndpointID, st.EventID) {
			created, ids = append(created, st.CreatedUS), append(ids, st.EventID)
		}
	}
	if len(ids) == 0 {
		return
	}
	bodies, err := d.store.bodies(ctx, created, ids)
	if err != nil {
		d.log.Warn("read webhook event bodies", "err", err)
		return
	}
	for _, c := range claims {
		if b, ok := bodies[c.it.st.EventID]; ok && c.it.body == nil {
			c.it.body = b
		}
	}
}

// signal wakes Run to dispatch at once: an attempt's outcome is stored, its sender free.
func (d *Dispatcher) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}
