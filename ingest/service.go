package ingest

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/versions"
)

// Owners tells which location and device ids exist in a scope (the catalog's documents).
// ExistingIDs takes ids with repeats and answers for each of them.
type Owners interface {
	ExistingIDs(ctx context.Context, scope kwhouse.Scope, kind string, ids []string) (func(id string) bool, error)
}

// Service takes meter records from the API and the bulk loader.
type Service struct {
	writer     *Writer
	owners     Owners
	db         *chstore.DB
	now        func() time.Time
	maxRecords int
	maxFailed  int // failed records a batch lists
	maxLine    int // bytes of one NDJSON line
	charge     func(ctx context.Context, scope kwhouse.Scope, n int) error
	versions   VersionClock
	revisions  Revisions // told of records before they are written (SetRevisions)
	// completions is told of each complete request body (SetCompletions).
	completions Completions
}

// VersionClock hands out row versions: Next reserves n consecutive ones and returns the
// first, above every version drawn before (by any process sharing the clock).
type VersionClock interface {
	Next(ctx context.Context, n int) (uint64, error)
}

// Revisions is told of the records a request is about to store. The function it returns
// is called once the write is over (written: whether the records were stored); an error
// refuses the write.
type Revisions interface {
	Revising(ctx context.Context, scope kwhouse.Scope, records []Record) (done func(ctx context.Context, written bool), err error)
}

// SetRevisions makes every write of records tell r (the cost.revised events); set once,
// before the service takes requests.
func (s *Service) SetRevisions(r Revisions) { s.revisions = r }

// Config configures the service.
type Config struct {
	MaxRecordsPerRequest int
	// MaxFailedRecords is how many failed records a batch lists, the first by record
	// number (0: DefaultMaxFailed); Batch.FailedRecordsCount counts them all.
	MaxFailedRecords int
	// MaxLineBytes bounds one NDJSON line (0: DefaultMaxLine); a longer line fails.
	MaxLineBytes int
	// Charge, when set, is asked for a request's records once they are parsed and before
	// anything is stored; an error refuses the whole request (an account's record rate).
	Charge func(ctx context.Context, scope kwhouse.Scope, n int) error
	// Versions orders re-sent readings: the shared clock of every kwhouse process
	// (versions.Clock); nil takes the service's own clock alone.
	Versions VersionClock
}

// NewService returns a Service writing through w.
func NewService(w *Writer, owners Owners, cfg Config, now func() time.Time) *Service {
	clock := cfg.Versions
	if clock == nil {
		clock = versions.Local(now)
	}
	return &Service{writer: w, owners: owners, db: w.db, now: now, maxRecords: cfg.MaxRecordsPerRequest,
		maxFailed: cmp.Or(cfg.MaxFailedRecords, DefaultMaxFailed), maxLine: cmp.Or(cfg.MaxLineBytes, DefaultMaxLine),
		charge: cfg.Charge, versions: clock}
}

// BodyFormat is how a request body frames its records (a bulk file: FileFormat).
type BodyFormat int

// Request body formats.
const (
	BodyJSONArray BodyFormat = iota
	BodyNDJSON
)

// SubmitInterval validates and stores the records of body. Records that fail validation
// are reported in the batch; the others are durable when it returns without error.
func (s *Service) SubmitInterval(ctx context.Context, scope kwhouse.Scope, body []byte, format BodyFormat) (Batch, error) {
	// Until its rows are queued, a pending flush may wait for them (MaxHold).
	queued := s.writer.expect()
	defer queued()
	// A record takes 100–250 bytes of JSON: room for the body's records up front saves
	// regrowing (and copying) the slices as they arrive.
	p := newParsed(min(len(body)/100, s.maxRecords)+1, s.maxFailed)
	decode := decodeArray
	if format == BodyNDJSON {
		decode = func(body []byte, fn func(num int, r *rawRecord) error) error {
			return decodeLines(body, 0, s.maxLine, fn, nil)
		}
	}
	err := decode(body, func(num int, r *rawRecord) error {
		if format == BodyJSONArray && num >= s.maxRecords {
			return tooManyRecords(s.maxRecords)
		}
		rec, problem := normalise(r)
		if problem != "" {
			p.fail(num, r.fields[fRecordRef], problem)
			return nil
		}
		p.accept(num, rec)
		return nil
	})
	if err != nil {
		return Batch{}, bodyError(err)
	}
	if err := s.chargeFor(ctx, scope, p.submitted); err != nil {
		return Batch{}, err
	}
	b, err := s.store(ctx, scope, p, queued)
	return s.completed(ctx, scope, b, err)
}

// parsed holds a request's records after validation.
type parsed struct {
	records   []Record
	nums      []int // record numbers of records: 0-based positions in a request, file lines in a bulk load
	failed    failures
	submitted int
}

// newParsed holds room for capacity records and lists the first keep failures (0: all).
func newParsed(capacity, keep int) *parsed {
	return &parsed{records: make([]Record, 0, capacity), nums: make([]int, 0, capacity), failed: failures{keep: keep}}
}

func (p *parsed) accept(num int, rec Record) {
	p.records, p.nums = append(p.records, rec), append(p.nums, num)
	p.submitted++
}

func (p *parsed) fail(num int, ref, problem string) {
	p.failed.add(FailedRecord{RecordNum: num, RecordReferenceID: ref, Error: problem})
	p.submitted++
}

// store fails overlapping records, checks ownership, writes the accepted records and the
// batch summary. queued, when set, withdraws the request's announcement to the writer
// (expect) as its rows enter the queue.
func (s *Service) store(ctx context.Context, scope kwhouse.Scope, p *parsed, queued func()) (Batch, error) {
	p.failOverlaps()
	if err := s.checkOwners(ctx, scope, p); err != nil {
		return Batch{}, err
	}
	b := s.newBatch(scope)
	b.add(p)
	return b, s.write(ctx, scope, p, &b, true, queued)
}

// newBatch starts the summary of a request's records.
func (s *Service) newBatch(scope kwhouse.Scope) Batch {
	return Batch{ID: kwhouse.NewID(kwhouse.PrefixBatch), Object: "meter_batch", LiveMode: scope.LiveMode,
		AccountID: scope.AccountID, FailedRecords: []FailedRecord{}, TimeCreated: s.now().UTC().Truncate(time.Second)}
}

// add counts p's records in the batch. A record is what the caller sent: an interval
// record, or a cumulative reading (whose first reading and exact repeats store no
// interval); accepted = sent − failed. The batch lists the first failures by record number,
// as many as p keeps, and counts all of them.
func (b *Batch) add(p *parsed) {
	b.RecordsSubmitted += p.submitted
	b.RecordsAccepted += p.submitted - p.failed.count
	b.RecordsProcessed += p.submitted
	b.FailedRecordsCount += p.failed.count
	b.FailedRecords = firstFailed(append(b.FailedRecords, p.failed.kept...), p.failed.keep)
	b.covers.add(p.records)
}

// write stores p's accepted records under batch summary, and the summary itself once
// the batch is complete.
func (s *Service) write(ctx context.Context, scope kwhouse.Scope, p *parsed, summary *Batch, complete bool, queued func()) error {
	base, err := s.versions.Next(ctx, len(p.records))
	if err != nil {
		return fmt.Errorf("row versions: %w", err)
	}
	rows := newRows(len(p.records))
	id := summary.ID
	for i := range p.records {
		rows.add(scope, &p.records[i], id, base+uint64(i))
	}
	// The summary and last_seen rows ride the records' flush: one insert per table for
	// all requests of a group commit, not one per request.
	ex := extras{seen: seenRows(scope, p.records, summary.TimeCreated)}
	if complete {
		ex.batches = []batchRow{{scope: scope, b: *summary}}
	}
	if s.revisions == nil || len(p.records) == 0 {
		return s.writer.write(ctx, rows, ex, queued)
	}
	done, err := s.revisions.Revising(ctx, scope, p.records)
	if err != nil {
		return err
	}
	err = s.writer.write(ctx, rows, ex, queued)
	done(ctx, err == nil)
	return err
}

// checkOwners fails the records whose location or device is not the caller's.
func (s *Service) checkOwners(ctx context.Context, scope kwhouse.Scope, p *parsed) error {
	locs := make([]string, 0, len(p.records))
	var devs []string
	for i := range p.records {
		locs = append(locs, p.records[i].LocationID)
		if d := p.records[i].DeviceID; d != "" {
			devs = append(devs, d)
		}
	}
	okLoc, err := s.owners.ExistingIDs(ctx, scope, "location", locs)
	if err != nil {
		return err
	}
	okDev, err := s.owners.ExistingIDs(ctx, scope, "device", devs)
	if err != nil {
		return err
	}
	kept, nums := p.records[:0], p.nums[:0]
	for i, rec := range p.records {
		switch {
		case !okLoc(rec.LocationID):
			p.failed.add(FailedRecord{RecordNum: p.nums[i], RecordReferenceID: rec.RecordRef,
				Error: fmt.Sprintf("location_id %s: no such location", rec.LocationID)})
		case rec.DeviceID != "" && !okDev(rec.DeviceID):
			p.failed.add(FailedRecord{RecordNum: p.nums[i], RecordReferenceID: rec.RecordRef,
				Error: fmt.Sprintf("device_id %s: no such device", rec.DeviceID)})
		default:
			kept, nums = append(kept, rec), append(nums, p.nums[i])
		}
	}
	p.records, p.nums = kept, nums
	return nil
}

func tooManyRecords(max int) error {
	return &kwhouse.Error{Kind: kwhouse.KindTooLarge, Code: "too_many_records",
		Message: fmt.Sprintf("a JSON array may hold at most %d records; send more as application/x-ndjson or in several requests", max)}
}

// bodyError maps decoding failures to 400s; others pass through.
func bodyError(err error) error {
	switch e := err.(type) {
	case *SyntaxError:
		return kwhouse.Invalid("invalid_json", "", "%s", e.Error())
	case *NotArrayError:
		return kwhouse.Invalid("invalid_body", "", "%s", e.Error())
	}
	return err
}

// chargeFor charges n records to the scope when the service has a charge.
func (s *Service) chargeFor(ctx context.Context, scope kwhouse.Scope, n int) error {
	if s.charge == nil {
		return nil
	}
	return s.charge(ctx, scope, n)
}
