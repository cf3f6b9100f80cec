package webhooks

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/docstore"
)

// known is an endpoint as the dispatcher holds it, with its secret and creation time.
type known struct {
	Endpoint
	CreatedUS int64
}

// endpointCache holds each scope's endpoints for a while: the dispatcher looks them up
// for every event and attempt. One look-up per scope runs at a time; the callers that
// come meanwhile wait for it (when a list expires, the attempts in flight do not all read
// it again at once).
type endpointCache struct {
	docs *docstore.Store
	ttl  time.Duration
	now  func() time.Time

	mu      sync.Mutex
	byScope map[kwhouse.Scope]cachedList
	reading map[kwhouse.Scope]*listRead
}

type cachedList struct {
	list    []known
	expires time.Time
}

// listRead is a look-up in flight; done closes when list and err are set.
type listRead struct {
	done chan struct{}
	list []known
	err  error
}

func newEndpointCache(docs *docstore.Store, ttl time.Duration, now func() time.Time) *endpointCache {
	return &endpointCache{docs: docs, ttl: ttl, now: now, byScope: map[kwhouse.Scope]cachedList{},
		reading: map[kwhouse.Scope]*listRead{}}
}

// of returns the endpoints of scope.
func (c *endpointCache) of(ctx context.Context, scope kwhouse.Scope) ([]known, error) {
	c.mu.Lock()
	if cl, ok := c.byScope[scope]; ok && c.now().Before(cl.expires) {
		c.mu.Unlock()
		return cl.list, nil
	}
	r, ok := c.reading[scope]
	if !ok {
		r = &listRead{done: make(chan struct{})}
		c.reading[scope] = r
		go c.read(context.WithoutCancel(ctx), scope, r)
	}
	c.mu.Unlock()
	select {
	case <-r.done:
		return r.list, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// read looks scope's endpoints up for every caller waiting on r.
func (c *endpointCache) read(ctx context.Context, scope kwhouse.Scope, r *listRead) {
	r.list, r.err = c.list(ctx, scope)
	c.mu.Lock()
	if c.reading[scope] == r { // else forgotten meanwhile: the list may predate the change
		delete(c.reading, scope)
		if r.err == nil {
			c.byScope[scope] = cachedList{list: r.list, expires: c.now().Add(c.ttl)}
		}
	}
	c.mu.Unlock()
	close(r.done)
}

func (c *endpointCache) list(ctx context.Context, scope kwhouse.Scope) ([]known, error) {
	docs, err := c.docs.ListAll(ctx, scope, KindEndpoint, docstore.ListQuery{})
	if err != nil {
		return nil, fmt.Errorf("webhook endpoints of %s: %w", scope.AccountID, err)
	}
	list := make([]known, len(docs))
	for i, d := range docs {
		if err := d.DecodeBody(&list[i].Endpoint); err != nil {
			return nil, err
		}
		list[i].CreatedUS = d.CreatedUS
	}
	return list, nil
}

// get returns one endpoint of scope; false when it does not exist (any more).
func (c *endpointCache) get(ctx context.Context, scope kwhouse.Scope, id string) (known, bool, error) {
	list, err := c.of(ctx, scope)
	if err != nil {
		return known{}, false, err
	}
	for _, e := range list {
		if e.ID == id {
			return e, true, nil
		}
	}
	return known{}, false, nil
}

// forget drops scope's list, so the next look-up reads it again.
func (c *endpointCache) forget(scope kwhouse.Scope) {
	c.mu.Lock()
	delete(c.byScope, scope)
	delete(c.reading, scope)
	c.mu.Unlock()
}
