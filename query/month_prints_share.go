package query

import (
	"context"
	"sync"
)

// printsShare hands the month reach fingerprints a fleet answer's buckets read
// (keptMonths) to its demand peaks (keptPeaks), so that an answer with charges reads
// month_prints once: the peaks take the location-level records of the asked direction
// (reachPrints.asked: a tiered location's months count both directions apart). The demand
// side waits until every chunk of the buckets has published its read (expect, publish) or
// the buckets are done (close), and reads what was not published itself (docs/costs.md,
// "Bill charges").
type printsShare struct {
	mu       sync.Mutex
	left     int  // chunks still to publish
	expected bool // expect was called
	done     chan struct{}
	closed   bool
	covered  map[string]sharedRead // by location
	reads    []reachPrints
}

// sharedRead is where a location's fingerprints were published: the months [m0, m1] (first
// days' day numbers) of reads[read].
type sharedRead struct {
	read   int
	m0, m1 uint32
}

type printsShareKey struct{}

func newPrintsShare() *printsShare {
	return &printsShare{done: make(chan struct{}), covered: map[string]sharedRead{}}
}

// withPrintsShare carries s with the statements of ctx: keptMonths publishes to it.
func withPrintsShare(ctx context.Context, s *printsShare) context.Context {
	return context.WithValue(ctx, printsShareKey{}, s)
}

// printsShareOf is the share ctx carries, or nil.
func printsShareOf(ctx context.Context) *printsShare {
	s, _ := ctx.Value(printsShareKey{}).(*printsShare)
	return s
}

// expect says that n chunks will publish (requestMonths, before it starts them).
func (s *printsShare) expect(n int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.left += n
	s.expected = true
	s.closeIfDone()
}

// publish adds a chunk's read of the months [m0, m1] (first days' day numbers; m0 > m1:
// none) of locations ids.
func (s *printsShare) publish(ids []string, m0, m1 uint32, p reachPrints) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && m0 <= m1 {
		for _, id := range ids {
			s.covered[id] = sharedRead{read: len(s.reads), m0: m0, m1: m1}
		}
		s.reads = append(s.reads, p)
	}
	s.left--
	s.closeIfDone()
}

func (s *printsShare) closeIfDone() {
	if s.expected && s.left <= 0 {
		s.closeLocked()
	}
}

// close ends the share: what was not published by now is read by the demand side.
func (s *printsShare) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
}

func (s *printsShare) closeLocked() {
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

// wait waits until s is closed (or ctx ends).
func (s *printsShare) wait(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// of is the published read of loc's month reaches and the months it holds, [m0, m1]
// (first days' day numbers), if one was published (never, on a nil share).
func (s *printsShare) of(loc string) (p reachPrints, m0, m1 uint32, ok bool) {
	if s == nil {
		return p, 0, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.covered[loc]
	if !ok {
		return p, 0, 0, false
	}
	return s.reads[r.read], r.m0, r.m1, true
}
