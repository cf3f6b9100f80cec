package query

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/gzip"
)

// Answer is an encoded fleet answer: the bytes its encoder wrote (computed), or the gzip
// stream the answer cache keeps (stored; docs/costs.md, "Answer cache"), so an answer
// served from the cache to a client that accepts gzip is sent as it was stored.
type Answer struct {
	stored bool
	plain  []byte // computed
	gz     []byte // stored
}

// computedAnswer is an answer as its encoder wrote it.
func computedAnswer(plain []byte) *Answer { return &Answer{plain: plain} }

// storedAnswer is an answer as the cache keeps it: its gzip stream.
func storedAnswer(gz []byte) *Answer { return &Answer{stored: true, gz: gz} }

// answerGzipLevel trades the cache's and the wire's bytes for the CPU of the one
// compression of each answer computed: a month by DAY page of 1,000 rows (272 KB of JSON)
// takes about 1 ms at level 6 to 16 KB, which a client inflates in about 0.5 ms.
const answerGzipLevel = 6

// gzipped returns the answer's gzip stream, compressing it when it was computed (only for
// the cache, after it is sent: level 6 takes about 9 ms of CPU for 2.2 MB of CSV).
func (a *Answer) gzipped() ([]byte, error) {
	if a.stored {
		return a.gz, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(a.plain)/8 + 64)
	w, err := gzip.NewWriterLevel(&buf, answerGzipLevel)
	if err == nil {
		_, err = w.Write(a.plain)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("gzip fleet answer: %w", err)
	}
	return buf.Bytes(), nil
}

// Stored returns the answer's gzip stream when it was served from the answer cache.
func (a *Answer) Stored() ([]byte, bool) { return a.gz, a.stored }

// Plain returns the answer as its encoder wrote it, inflating it when it was stored.
func (a *Answer) Plain() ([]byte, error) {
	if !a.stored {
		return a.plain, nil
	}
	r, err := gzip.NewReader(bytes.NewReader(a.gz))
	if err != nil {
		return nil, fmt.Errorf("read stored fleet answer: %w", err)
	}
	// A gzip stream ends with its plain size (mod 2^32): one buffer of that size.
	var buf bytes.Buffer
	if n := len(a.gz); n >= 4 {
		buf.Grow(int(min(binary.LittleEndian.Uint32(a.gz[n-4:]), maxPlainHint)) + 1)
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("inflate stored fleet answer: %w", err)
	}
	return buf.Bytes(), nil
}

// maxPlainHint bounds the buffer a stored answer's own size hint reserves.
const maxPlainHint = 1 << 30
