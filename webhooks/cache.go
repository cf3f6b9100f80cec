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
// for every event.
type endpointCache struct {
	docs *docstore.Store
	ttl  time.Duration
	now  func() time.Time

	mu      sync.Mutex
	byScope map[kwhouse.Scope]cachedList
}

type cachedList struct {
	list    []known
	expires time.Time
}

func newEndpointCache(docs *docstore.Store, ttl time.Duration, now func() time.Time) *endpointCache {
	return &endpointCache{docs: docs, ttl: ttl, now: now, byScope: map[kwhouse.Scope]cachedList{}}
}

// of returns the endpoints of scope.
func (c *endpointCache) of(ctx context.Context, scope kwhouse.Scope) ([]known, error) {
	c.mu.Lock()
	cl, ok := c.byScope[scope]
	c.mu.Unlock()
	if ok && c.now().Before(cl.expires) {
		return cl.list, nil
	}
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
	c.mu.Lock()
	c.byScope[scope] = cachedList{list: list, expires: c.now().Add(c.ttl)}
	c.mu.Unlock()
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
	c.mu.Unlock()
}
