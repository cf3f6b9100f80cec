package ingest

import (
	"context"
	"slices"
	"time"

	"github.com/kwhouse/kwhouse"
)

// Completions is told of every request body of readings (PUT /meters/interval, as a JSON
// array, NDJSON or a streamed NDJSON body, and PUT /meters/cumulative/epoch) once its
// batch is complete and stored: the meter.batch.completed events. An error answers the
// request with it (the readings stay stored; sending them again stores the same data).
type Completions interface {
	Completed(ctx context.Context, scope kwhouse.Scope, b Batch, e Extent) error
}

// SetCompletions makes every complete request body tell c; set once, before the service
// takes requests. Bulk loads (Load) do not.
func (s *Service) SetCompletions(c Completions) { s.completions = c }

// MaxExtentLocations bounds the location ids an Extent lists (LocationCount counts all).
const MaxExtentLocations = 100

// Extent is what a batch's accepted records cover: their locations, the first
// MaxExtentLocations by id, and the time from the earliest start to the latest end (both
// zero when no record was accepted).
type Extent struct {
	Locations     []string
	LocationCount int
	Start, End    time.Time
}

// extent gathers a batch's Extent as its records are accepted, chunk by chunk.
type extent struct {
	locations  map[string]struct{}
	start, end int64
}

func (e *extent) add(records []Record) {
	for i := range records {
		r := &records[i]
		if e.locations == nil {
			e.locations = map[string]struct{}{}
			e.start, e.end = r.Start, r.End
		}
		e.locations[r.LocationID] = struct{}{}
		e.start, e.end = min(e.start, r.Start), max(e.end, r.End)
	}
}

// Extent returns the locations (sorted, at most MaxExtentLocations) and the time range.
func (e *extent) Extent() Extent {
	out := Extent{LocationCount: len(e.locations), Locations: make([]string, 0, min(len(e.locations), MaxExtentLocations))}
	for l := range e.locations {
		out.Locations = append(out.Locations, l)
	}
	slices.Sort(out.Locations)
	out.Locations = out.Locations[:min(len(out.Locations), MaxExtentLocations)]
	if len(e.locations) > 0 {
		out.Start, out.End = time.Unix(e.start, 0).UTC(), time.Unix(e.end, 0).UTC()
	}
	return out
}

// completed tells the completions of a request body's batch that was stored (err nil).
func (s *Service) completed(ctx context.Context, scope kwhouse.Scope, b Batch, err error) (Batch, error) {
	if err != nil || s.completions == nil {
		return b, err
	}
	if err := s.completions.Completed(ctx, scope, b, b.covers.Extent()); err != nil {
		return Batch{}, err
	}
	return b, nil
}
