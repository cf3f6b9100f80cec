package docstore

import (
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
)

// knownIDs remembers ids recently seen to exist, per scope: the ingest hot path asks about
// every record's location and device, and a per-scope map hashes only the id.
type knownIDs struct {
	mu  sync.RWMutex
	ttl time.Duration
	n   int
	m   map[kwhouse.Scope]map[string]int64 // expiry in Unix nanoseconds
}

func newKnownIDs(ttl time.Duration) *knownIDs {
	return &knownIDs{ttl: ttl, m: map[kwhouse.Scope]map[string]int64{}}
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
