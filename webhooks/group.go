package webhooks

import (
	"context"
	"sync"
	"time"
)

// groupWriter stores delivery states — new deliveries and the outcomes of attempts — in
// groups (group commit): the states that come while an insert runs, or within interval of
// the last insert's start, share the next insert. At hundreds of attempts a second, one
// insert each would be a ClickHouse part each, and back-to-back inserts slow every other
// statement on the server. A lone state after a quiet spell goes at once; every caller
// gets its insert's result.
type groupWriter struct {
	write    func(context.Context, []state) error
	interval time.Duration // webhooks.write_interval

	mu      sync.Mutex
	pending []pendingStates
	leading bool
	last    time.Time // when the last insert started
}

type pendingStates struct {
	states []state
	done   chan error
}

// add stores states with the next insert and returns its result.
func (g *groupWriter) add(ctx context.Context, states ...state) error {
	if len(states) == 0 {
		return nil
	}
	p := pendingStates{states: states, done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, p)
	if !g.leading {
		g.leading = true
		go g.flush(context.WithoutCancel(ctx))
	}
	g.mu.Unlock()
	return <-p.done
}

func (g *groupWriter) flush(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for len(g.pending) > 0 {
		if wait := g.interval - time.Since(g.last); wait > 0 {
			g.mu.Unlock()
			time.Sleep(wait) // what comes meanwhile joins this insert
			g.mu.Lock()
		}
		group := g.pending
		g.pending, g.last = nil, time.Now()
		g.mu.Unlock()
		var states []state
		for _, p := range group {
			states = append(states, p.states...)
		}
		err := g.write(ctx, states)
		for _, p := range group {
			p.done <- err
		}
		g.mu.Lock()
	}
	g.leading = false
}
