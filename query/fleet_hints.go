package query

import (
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
)

// Where most of a fleet is dirty — a client re-sends every reading (estimates, then the
// validated day) and merges have not folded them yet — the undeduplicated first read is
// wasted: every location is priced twice. dirtyHints remembers, per account and mode, that
// a first read found most of a batch dirty, and for dirtyHintTTL fleet queries of that
// scope deduplicate at once; then a first read is tried again.
const (
	dirtyHintTTL = 10 * time.Minute
	dirtyMost    = 0.5 // share of a batch's locations from which a read is remembered as mostly dirty
)

// dirtyHints is safe for concurrent use; a nil one remembers nothing.
type dirtyHints struct {
	mu   sync.Mutex
	seen map[kwhouse.Scope]time.Time // scope → when a first read found most of a batch dirty
}

func newDirtyHints() *dirtyHints { return &dirtyHints{seen: map[kwhouse.Scope]time.Time{}} }

// mostlyDirty reports whether a first read of scope found most of a batch dirty within the TTL.
func (h *dirtyHints) mostlyDirty(scope kwhouse.Scope, now time.Time) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.seen[scope]
	return ok && now.Sub(at) < dirtyHintTTL
}

// note records a first read of scope that found dirty of total locations dirty.
func (h *dirtyHints) note(scope kwhouse.Scope, dirty, total int, now time.Time) {
	if h == nil || total == 0 || float64(dirty) < dirtyMost*float64(total) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s, at := range h.seen { // expired scopes go: the map holds recent accounts only
		if now.Sub(at) >= dirtyHintTTL {
			delete(h.seen, s)
		}
	}
	h.seen[scope] = now
}
