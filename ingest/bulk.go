package ingest

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kwhouse/kwhouse"
)

// FileFormat is the layout of a bulk file (a request body: BodyFormat).
type FileFormat int

// Bulk file formats.
const (
	FileCSV FileFormat = iota
	FileNDJSON
)

// BulkOptions tune Load.
type BulkOptions struct {
	ChunkRecords int                  // records stored per write (default 100,000)
	Rejects      RejectWriter         // where failed rows go, with the reason (may be nil)
	Progress     func(p BulkProgress) // called after every chunk
}

// BulkProgress is how far a load has got.
type BulkProgress struct {
	Rows, Accepted, Failed int64
}

// RejectWriter takes rows that were not stored.
type RejectWriter interface {
	Reject(line int, original, reason string) error
}

// Load streams interval records from r (CSV with a header row, or NDJSON) into the
// store through the same validation and writer as PUT /meters/interval. Bad rows go to
// opt.Rejects; a store failure stops the load (what was stored stays stored, and loading
// the file again gives the same data).
func (s *Service) Load(ctx context.Context, scope kwhouse.Scope, r io.Reader, format FileFormat, opt BulkOptions) (BulkProgress, error) {
	if opt.ChunkRecords <= 0 {
		opt.ChunkRecords = 100_000
	}
	l := &loader{s: s, scope: scope, opt: opt, chunk: newChunk()}
	var err error
	if format == FileCSV {
		err = l.readCSV(ctx, r)
	} else {
		err = l.readNDJSON(ctx, r)
	}
	if err == nil {
		err = l.flush(ctx)
	}
	return l.done, err
}

type loader struct {
	s     *Service
	scope kwhouse.Scope
	opt   BulkOptions
	chunk *chunk
	done  BulkProgress
}

// chunk is records waiting to be stored, with their original text for the reject file.
type chunk struct {
	p        *parsed
	original map[int]string
}

func newChunk() *chunk { return &chunk{p: &parsed{}, original: map[int]string{}} }

func (l *loader) add(ctx context.Context, line int, original string, r *rawRecord) error {
	l.chunk.original[line] = original
	if rec, problem := normalise(r); problem != "" {
		l.chunk.p.fail(line, r.fields[fRecordRef], problem)
	} else {
		l.chunk.p.accept(line, rec)
	}
	if l.chunk.p.submitted >= l.opt.ChunkRecords {
		return l.flush(ctx)
	}
	return nil
}

func (l *loader) flush(ctx context.Context) error {
	c := l.chunk
	if c.p.submitted == 0 {
		return nil
	}
	l.chunk = newChunk()
	b, err := l.s.store(ctx, l.scope, c.p, nil)
	if err != nil {
		return err
	}
	for _, f := range b.FailedRecords {
		if l.opt.Rejects != nil {
			if err := l.opt.Rejects.Reject(f.RecordNum, c.original[f.RecordNum], f.Error); err != nil {
				return fmt.Errorf("write reject: %w", err)
			}
		}
	}
	l.done.Rows += int64(b.RecordsSubmitted)
	l.done.Accepted += int64(b.RecordsAccepted)
	l.done.Failed += int64(len(b.FailedRecords))
	if l.opt.Progress != nil {
		l.opt.Progress(l.done)
	}
	return nil
}

// readCSV reads a header row naming record fields, then one record per row.
func (l *loader) readCSV(ctx context.Context, r io.Reader) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("read CSV header: %w", err)
	}
	cols := make([]int, len(header))
	for i, name := range header {
		if cols[i] = fieldIndex(strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))); cols[i] < 0 {
			return fmt.Errorf("CSV header: unknown column %q (columns are %s)", name, strings.Join(fieldNames[:], ", "))
		}
	}
	for line := 2; ; line++ {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var r rawRecord
		var original string
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe):
			r.problem = "malformed CSV: " + pe.Err.Error()
		case err != nil:
			return fmt.Errorf("read CSV line %d: %w", line, err)
		case len(row) != len(cols):
			r.problem = fmt.Sprintf("row has %d columns, the header %d", len(row), len(cols))
		default:
			for i, v := range row {
				if v != "" {
					r.fields[cols[i]], r.set[cols[i]] = v, true
				}
			}
		}
		original = strings.Join(row, ",")
		if err := l.add(ctx, line, original, &r); err != nil {
			return err
		}
	}
}

// readNDJSON reads one JSON record object per line; a line that is not one is rejected.
func (l *loader) readNDJSON(ctx context.Context, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		text, err := br.ReadString('\n')
		if text == "" && errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read line %d: %w", line, err)
		}
		text = strings.TrimRight(text, "\r\n")
		if strings.TrimSpace(text) == "" {
			continue
		}
		var rec rawRecord
		sc := &scanner{b: []byte(text)}
		sc.ws()
		if perr := sc.record(&rec); perr != nil || sc.end() != nil {
			rec = rawRecord{problem: "not one JSON record object"}
		}
		if err := l.add(ctx, line, text, &rec); err != nil {
			return err
		}
	}
}

// CSVRejects writes rejected CSV rows as "line,error,row".
type CSVRejects struct{ W *csv.Writer }

// Reject implements RejectWriter.
func (c CSVRejects) Reject(line int, original, reason string) error {
	if err := c.W.Write([]string{fmt.Sprint(line), reason, original}); err != nil {
		return err
	}
	c.W.Flush()
	return c.W.Error()
}

// NDJSONRejects writes rejected lines as {"line","error","record"} objects.
type NDJSONRejects struct{ W io.Writer }

// Reject implements RejectWriter.
func (n NDJSONRejects) Reject(line int, original, reason string) error {
	rec := json.RawMessage(original)
	if !json.Valid(rec) {
		b, _ := json.Marshal(original)
		rec = b
	}
	b, err := json.Marshal(struct {
		Line   int             `json:"line"`
		Error  string          `json:"error"`
		Record json.RawMessage `json:"record"`
	}{line, reason, rec})
	if err != nil {
		return err
	}
	_, err = n.W.Write(append(b, '\n'))
	return err
}
