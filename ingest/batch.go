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
	ID               string `json:"id"`
	Object           string `json:"object"`
	LiveMode         bool   `json:"live_mode"`
	RecordsSubmitted int    `json:"records_submitted"`
	RecordsAccepted  int    `json:"records_accepted"`
	RecordsProcessed int    `json:"records_processed"`
	// FailedRecords lists the first failures by record number (ingest.max_failed_records);
	// FailedRecordsCount counts every one (a kwhouse field; FlatPeak's batch lists all).
	FailedRecords      []FailedRecord `json:"failed_records"`
	FailedRecordsCount int            `json:"failed_records_count"`
	TimeCreated        time.Time      `json:"time_created"`
	AccountID          string         `json:"account_id"`

	covers extent // the accepted records' locations and time (Completions)
}

// FailedRecord is a record that was not stored, and why.
type FailedRecord struct {
	RecordNum         int    `json:"record_num"`
	RecordReferenceID string `json:"record_reference_id,omitempty"`
	Error             string `json:"error"`
}

// maxFailedKept bounds the failures stored with a batch: an API batch lists at most
// ingest.max_failed_records (≤ 10,000) already; a bulk load's chunk lists all of its own.
const maxFailedKept = 10_000

// batchRow is a batch summary waiting to be stored with its records' flush.
type batchRow struct {
	scope kwhouse.Scope
	b     Batch
}

// insertBatches stores the summaries of one flush as one block.
func insertBatches(ctx context.Context, db *chstore.DB, rows []batchRow) error {
	ins, err := db.Insert(ctx, insertBatchesStmt)
	if err != nil {
		return fmt.Errorf("save batches: %w", err)
	}
	for _, r := range rows {
		failed := r.b.FailedRecords
		if len(failed) > maxFailedKept {
			failed = failed[:maxFailedKept]
		}
		fj, err := json.Marshal(failed)
		if err != nil {
			_ = ins.Abort()
			return fmt.Errorf("encode failed records of %s: %w", r.b.ID, err)
		}
		if err := ins.Append(r.scope.AccountID, r.scope.LiveByte(), r.b.ID, uint32(r.b.RecordsSubmitted),
			uint32(r.b.RecordsAccepted), uint32(r.b.RecordsProcessed), string(fj), r.b.TimeCreated); err != nil {
			_ = ins.Abort()
			return fmt.Errorf("save batch %s: %w", r.b.ID, err)
		}
	}
	return ins.Send()
}

// Batch returns a stored batch summary.
func (s *Service) Batch(ctx context.Context, scope kwhouse.Scope, id string) (Batch, error) {
	b := Batch{ID: id, Object: "meter_batch", LiveMode: scope.LiveMode, AccountID: scope.AccountID}
	var sub, acc, proc uint32
	var failed string
	err := s.db.QueryRow(ctx, getBatchStmt, scope.AccountID, scope.LiveByte(), id).
		Scan(&sub, &acc, &proc, &failed, &b.TimeCreated)
	if errors.Is(err, sql.ErrNoRows) {
		return Batch{}, kwhouse.NotFound("batch_id", id)
	}
	if err != nil {
		return Batch{}, fmt.Errorf("get batch %s: %w", id, err)
	}
	b.RecordsSubmitted, b.RecordsAccepted, b.RecordsProcessed = int(sub), int(acc), int(proc)
	b.FailedRecordsCount = b.RecordsSubmitted - b.RecordsAccepted
	if err := json.Unmarshal([]byte(failed), &b.FailedRecords); err != nil {
		return Batch{}, fmt.Errorf("decode failed records of %s: %w", id, err)
	}
	return b, nil
}

var insertBatchesStmt = chstore.Register("ingest.insert_batches", `INSERT INTO meter_batches (account_id, live_mode, id,
		records_submitted, records_accepted, records_processed, failed_records, time_created) VALUES`).Eventual() // rides every flush

var getBatchStmt = chstore.Register("ingest.batch", `SELECT records_submitted, records_accepted,
		records_processed, failed_records, time_created FROM meter_batches
		WHERE account_id = ? AND live_mode = ? AND id = ? LIMIT 1`)
