package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/ingest"
)

// BatchCompletion is the data of a meter.batch.completed event: one request body of
// readings, stored. Its counts are those of GET /meters/batch?batch_id=…; LocationIDs are
// the accepted records' locations (the first ingest.MaxExtentLocations by id,
// LocationCount counts them all), StartTime and EndTime the earliest start and latest end
// of its accepted records (absent when none was accepted).
type BatchCompletion struct {
	BatchID            string             `json:"batch_id"`
	RecordsSubmitted   int                `json:"records_submitted"`
	RecordsAccepted    int                `json:"records_accepted"`
	FailedRecordsCount int                `json:"failed_records_count"`
	LocationIDs        []string           `json:"location_ids"`
	LocationCount      int                `json:"location_count"`
	StartTime          *catalog.Timestamp `json:"start_time,omitempty"`
	EndTime            *catalog.Timestamp `json:"end_time,omitempty"`
	TimeCreated        catalog.Timestamp  `json:"time_created"`
}

// BatchEvents stores a meter.batch.completed event for every complete request body of
// readings (ingest.Completions), in scopes with an endpoint that takes them.
type BatchEvents struct {
	docs *docstore.Store
	subs subscribers
}

// NewBatchEvents returns the source of meter.batch.completed events; endpointTTL is
// webhooks.endpoint_cache_ttl.
func NewBatchEvents(docs *docstore.Store, endpointTTL time.Duration, log *slog.Logger) *BatchEvents {
	return &BatchEvents{docs: docs, subs: newSubscribers(docs, endpointTTL, log)}
}

// Completed stores the batch's event (before the request is answered: an event that
// cannot be stored fails the request, which the caller may send again).
func (e *BatchEvents) Completed(ctx context.Context, scope kwhouse.Scope, b ingest.Batch, x ingest.Extent) error {
	if !e.subs.want(ctx, scope, EventBatchCompleted) {
		return nil
	}
	data := BatchCompletion{BatchID: b.ID, RecordsSubmitted: b.RecordsSubmitted, RecordsAccepted: b.RecordsAccepted,
		FailedRecordsCount: b.FailedRecordsCount, LocationIDs: x.Locations, LocationCount: x.LocationCount,
		TimeCreated: catalog.Timestamp(b.TimeCreated)}
	if x.LocationCount > 0 {
		start, end := catalog.Timestamp(x.Start), catalog.Timestamp(x.End)
		data.StartTime, data.EndTime = &start, &end
	}
	if _, err := catalog.RecordEvent(ctx, e.docs, scope, b.ID, EventBatchCompleted, data); err != nil {
		return fmt.Errorf("batch %s: %w", b.ID, err)
	}
	return nil
}
