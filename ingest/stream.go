package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/kwhouse/kwhouse"
)

// DefaultStreamFrom is the size above which an NDJSON body is streamed by default.
const DefaultStreamFrom = 16 << 20

// DefaultStreamChunk is how many bytes of an NDJSON stream are decoded and stored at a
// time (about 50,000 records).
const DefaultStreamChunk = 8 << 20

// SubmitIntervalStream stores an NDJSON body of any length as it arrives: chunkBytes of
// complete lines at a time are decoded, checked and written while the next chunk is read,
// so memory stays bounded by two chunks. A line that is not a JSON object, or is longer
// than the line limit, fails as a record (the stream goes on; a long line is skipped as
// it arrives, never held). The batch, with one id for the whole body, is complete when
// this returns without error; after an error part of the body may be stored, and sending
// it again gives exactly the same stored data.
func (s *Service) SubmitIntervalStream(ctx context.Context, scope kwhouse.Scope, r io.Reader, chunkBytes int) (Batch, error) {
	if chunkBytes <= 0 {
		chunkBytes = DefaultStreamChunk
	}
	st := &stream{s: s, scope: scope, b: s.newBatch(scope)}
	br := bufio.NewReaderSize(r, 64<<10)
	r = br
	var rest []byte
	for eof := false; !eof; {
		buf := make([]byte, len(rest), max(chunkBytes, 2*len(rest)))
		copy(buf, rest)
		n, err := io.ReadFull(r, buf[len(rest):cap(buf)])
		buf = buf[:len(rest)+n]
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			eof = true
		case err != nil:
			st.wait()
			return Batch{}, bodyReadError(err)
		}
		cut := len(buf)
		if !eof {
			cut = bytes.LastIndexByte(buf, '\n') + 1 // 0: one line longer than the chunk; read on
		}
		rest = buf[cut:]
		if !eof && len(rest) > s.maxLine {
			// Keep just enough of the line for the next chunk to fail it; skip the rest.
			rest = append(bytes.Clone(rest[:s.maxLine+1]), '\n')
			if err := skipLine(br); err != nil {
				st.wait()
				return Batch{}, bodyReadError(err)
			}
		}
		if err := st.chunk(ctx, buf[:cut], eof); err != nil {
			return Batch{}, err
		}
	}
	return s.completed(ctx, scope, st.b, st.wait())
}

// skipLine reads up to and including the next newline (or to the end), keeping none of it.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		switch {
		case err == nil, errors.Is(err, io.EOF):
			return nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return err
		}
	}
}

// stream is an NDJSON body being stored: one chunk's write may run while the next is read.
type stream struct {
	s       *Service
	scope   kwhouse.Scope
	b       Batch
	lines   int        // lines decoded so far
	pending chan error // the write in flight, if any
}

// chunk decodes complete lines and starts their write once the previous write is done.
// The last chunk writes the batch summary with the records.
func (st *stream) chunk(ctx context.Context, text []byte, last bool) error {
	p := newParsed(len(text)/100+1, st.s.maxFailed)
	first := st.lines
	st.lines += bytes.Count(text, []byte{'\n'})
	if len(text) > 0 && text[len(text)-1] != '\n' {
		st.lines++
	}
	err := decodeLines(text, first, st.s.maxLine, func(num int, r *rawRecord) error {
		if rec, problem := normalise(r); problem != "" {
			p.fail(num, r.fields[fRecordRef], problem)
		} else {
			p.accept(num, rec)
		}
		return nil
	}, func(num int, err error) { p.fail(num, "", err.Error()) })
	if err != nil {
		return err
	}
	if err := st.wait(); err != nil {
		return err
	}
	if err := st.s.chargeFor(ctx, st.scope, p.submitted); err != nil {
		return err
	}
	p.failOverlaps() // within the chunk: a stream's memory stays bounded
	if err := st.s.checkOwners(ctx, st.scope, p); err != nil {
		return err
	}
	st.b.add(p)
	if last {
		return st.s.write(ctx, st.scope, p, &st.b, true, nil)
	}
	summary := st.b
	st.pending = make(chan error, 1)
	go func() { st.pending <- st.s.write(ctx, st.scope, p, &summary, false, nil) }()
	return nil
}

// wait waits for the write in flight.
func (st *stream) wait() error {
	if st.pending == nil {
		return nil
	}
	err := <-st.pending
	st.pending = nil
	return err
}

func bodyReadError(err error) error {
	return kwhouse.Invalid("unreadable_body", "", "could not read the request body: %v", err)
}
