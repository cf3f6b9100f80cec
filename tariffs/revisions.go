package tariffs

import (
	"context"
	"time"

	"github.com/kwhouse/kwhouse"
)

// PriceChange is what a write of tariffs or market prices can change: the cost of the
// records of Locations over the UTC time [From, To), or at any time when Every (a tariff
// write, which can change extrapolated prices anywhere). It is what the write's change
// records mark (changes.go).
type PriceChange struct {
	Locations []string
	From, To  time.Time
	Every     bool
}

// PriceRevisions is told of a price write before it is made (the cost.revised events);
// the function it returns is called once the write and its change records are done
// (written: whether the write succeeded). An error refuses the write.
type PriceRevisions interface {
	RevisingPrices(ctx context.Context, scope kwhouse.Scope, ch PriceChange) (done func(ctx context.Context, written bool), err error)
}

// SetRevisions makes every price write tell r; set once, before the service takes
// requests.
func (s *Service) SetRevisions(r PriceRevisions) { s.revisions = r }

// revising tells the revisions of ch, when there are any.
func (s *Service) revising(ctx context.Context, scope kwhouse.Scope, ch PriceChange) (func(context.Context, bool), error) {
	if s.revisions == nil || len(ch.Locations) == 0 {
		return func(context.Context, bool) {}, nil
	}
	return s.revisions.RevisingPrices(ctx, scope, ch)
}

// mark records ch in the change records.
func (s *Service) mark(ctx context.Context, scope kwhouse.Scope, ch PriceChange) error {
	if ch.Every {
		return s.markLocations(ctx, scope, ch.Locations...)
	}
	return s.markRange(ctx, scope, ch.Locations, ch.From, ch.To)
}
