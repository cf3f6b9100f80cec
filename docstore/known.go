package docstore

import (
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
)

// knownIDs remembers ids recently seen to exist, per scope.
type knownIDs struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[knownKey]time.Time
}

type knownKey struct {
	scope kwhouse.Scope
	id    string
}

func newKnownIDs(ttl time.Duration) *knownIDs {
	return &knownIDs{ttl: ttl, m: map[knownKey]time.Time{}}
}

func (k *knownIDs) has(scope kwhouse.Scope, id string, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	exp, ok := k.m[knownKey{scope, id}]
	return ok && now.Before(exp)
}

func (k *knownIDs) add(scope kwhouse.Scope, id string, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) > 1_000_000 {
		clear(k.m)
	}
	k.m[knownKey{scope, id}] = now.Add(k.ttl)
}

func (k *knownIDs) forget(scope kwhouse.Scope, id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, knownKey{scope, id})
}
