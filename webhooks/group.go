package webhooks

import (
	"context"
	"sync"
)

// groupWriter stores the outcomes of attempts that finish while an insert runs in the next
// insert together (group commit): at hundreds of attempts a second, one insert each would
// be a ClickHouse part each. A lone outcome goes at once; every caller gets its insert's
// result.
type groupWriter struct {
	write func(context.Context, []state) error

	mu      sync.Mutex
	pending []pendingState
	leading bool
}

type pendingState struct {
	st   state
	done chan error
}

func (g *groupWriter) add(ctx context.Context, st state) error {
	p := pendingState{st: st, done: make(chan error, 1)}
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
		group := g.pending
		g.pending = nil
		g.mu.Unlock()
		states := make([]state, len(group))
		for i, p := range group {
			states[i] = p.st
		}
		err := g.write(ctx, states)
		for _, p := range group {
			p.done <- err
		}
		g.mu.Lock()
	}
	g.leading = false
}
