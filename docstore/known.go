package docstore

import (
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
)

// knownIDs remembers ids recently seen to exist, per scope: the ingest hot path asks about
// every record's location and device, and a per-scope map hashes only the id.
//
// What another kwhouse process deletes is learnt through the scope's deletion epoch in
// Redis (Store.deletionEpoch): a scope's ids are kept only under the epoch they were
// found in.
type knownIDs struct {
	mu     sync.RWMutex
	ttl    time.Duration
	n      int
	m      map[kwhouse.Scope]map[string]int64 // expiry in Unix nanoseconds
	epochs map[kwhouse.Scope]string           // the deletion epoch m[scope] was found under
}

func newKnownIDs(ttl time.Duration) *knownIDs {
	return &knownIDs{ttl: ttl, m: map[kwhouse.Scope]map[string]int64{}, epochs: map[kwhouse.Scope]string{}}
}

// under drops the scope's ids when they were found under another deletion epoch than
// epoch ("" — unknown — keeps nothing).
func (k *knownIDs) under(scope kwhouse.Scope, epoch string) {
	k.mu.RLock()
	same := epoch != "" && k.epochs[scope] == epoch
	k.mu.RUnlock()
	if same {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.epochs[scope] != epoch || epoch == "" {
		k.n -= len(k.m[scope])
		delete(k.m, scope)
		k.epochs[scope] = epoch
	}
}

// missing returns the ids not known to exist at now, each once.
func (k *knownIDs) missing(scope kwhouse.Scope, ids []string, now time.Time) []string {
	t := now.UnixNano()
	k.mu.RLock()
	defer k.mu.RUnlock()
	ofScope := k.m[scope]
	var out []string
	var seen map[string]bool
	for _, id := range ids {
		if exp, ok := ofScope[id]; ok && t < exp {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// add remembers ids as existing until now plus the TTL.
func (k *knownIDs) add(scope kwhouse.Scope, ids []string, now time.Time) {
	if len(ids) == 0 {
		return
	}
	exp := now.Add(k.ttl).UnixNano()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n > 1_000_000 {
		clear(k.m)
		k.n = 0
	}
	if k.m[scope] == nil {
		k.m[scope] = make(map[string]int64, len(ids))
	}
	for _, id := range ids {
		k.m[scope][id] = exp
	}
	k.n += len(ids)
}

func (k *knownIDs) forget(scope kwhouse.Scope, id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m[scope], id)
}
