package ingest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// Batch is the summary of one submission (object meter_batch).
type Batch struct {
	ID               string         `json:"id"`
	Object           string         `json:"object"`
	LiveMode         bool           `json:"live_mode"`
	RecordsSubmitted int            `json:"records_submitted"`
	RecordsAccepted  int            `json:"records_accepted"`
	RecordsProcessed int            `json:"records_processed"`
	FailedRecords    []FailedRecord `json:"failed_records"`
	TimeCreated      time.Time      `json:"time_created"`
	AccountID        string         `json:"account_id"`
}

// FailedRecord is a record that was not stored, and why.
type FailedRecord struct {
	RecordNum         int    `json:"record_num"`
	RecordReferenceID string `json:"record_reference_id,omitempty"`
	Error             string `json:"error"`
}

// maxFailedKept bounds the failures stored with a batch (all are returned by the PUT).
const maxFailedKept = 10_000

type batchStore struct{ db *chstore.DB }

func (s *batchStore) save(ctx context.Context, scope kwhouse.Scope, b Batch) error {
	failed := b.FailedRecords
	if len(failed) > maxFailedKept {
		failed = failed[:maxFailedKept]
	}
	if failed == nil {
		failed = []FailedRecord{}
	}
	fj, err := json.Marshal(failed)
	if err != nil {
		return fmt.Errorf("encode failed records: %w", err)
	}
	ins, err := s.db.Conn.PrepareBatch(s.db.WriteContext(ctx), `INSERT INTO meter_batches (account_id, live_mode, id,
		records_submitted, records_accepted, records_processed, failed_records, time_created) VALUES`)
	if err != nil {
		return chstore.Classify(fmt.Errorf("save batch %s: %w", b.ID, err))
	}
	if err := ins.Append(scope.AccountID, liveByte(scope), b.ID, uint32(b.RecordsSubmitted), uint32(b.RecordsAccepted),
		uint32(b.RecordsProcessed), string(fj), b.TimeCreated); err != nil {
		return fmt.Errorf("save batch %s: %w", b.ID, err)
	}
	return chstore.Classify(ins.Send())
}

// Batch returns a stored batch summary.
func (s *Service) Batch(ctx context.Context, scope kwhouse.Scope, id string) (Batch, error) {
	b := Batch{ID: id, Object: "meter_batch", LiveMode: scope.LiveMode, AccountID: scope.AccountID}
	var sub, acc, proc uint32
	var failed string
	err := s.batches.db.Conn.QueryRow(s.batches.db.ReadContext(ctx), `SELECT records_submitted, records_accepted,
		records_processed, failed_records, time_created FROM meter_batches
		WHERE account_id = ? AND live_mode = ? AND id = ? LIMIT 1`, scope.AccountID, liveByte(scope), id).
		Scan(&sub, &acc, &proc, &failed, &b.TimeCreated)
	if errors.Is(err, sql.ErrNoRows) {
		return Batch{}, kwhouse.NotFound("batch_id", id)
	}
	if err != nil {
		return Batch{}, chstore.Classify(fmt.Errorf("get batch %s: %w", id, err))
	}
	b.RecordsSubmitted, b.RecordsAccepted, b.RecordsProcessed = int(sub), int(acc), int(proc)
	if err := json.Unmarshal([]byte(failed), &b.FailedRecords); err != nil {
		return Batch{}, fmt.Errorf("decode failed records of %s: %w", id, err)
	}
	return b, nil
}

func liveByte(s kwhouse.Scope) uint8 {
	if s.LiveMode {
		return 1
	}
	return 0
}
