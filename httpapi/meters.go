package httpapi

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/ingest"
)

// putInterval stores interval records: a JSON array, or application/x-ndjson of any
// length (up to the ingest body limit), optionally gzip-encoded.
func (s *Server) putInterval(c *gin.Context) (int, any, error) {
	format := ingest.BodyJSONArray
	if mt, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type")); mt == "application/x-ndjson" || mt == "application/jsonl" {
		format = ingest.BodyNDJSON
	}
	if n := c.Request.ContentLength; format == ingest.BodyNDJSON && (n < 0 || n > s.deps.IngestStreamFrom) {
		return s.streamInterval(c)
	}
	body, err := readMeterBody(c, s.deps.IngestMaxBodyBytes)
	if err != nil {
		return 0, nil, err
	}
	b, err := s.deps.Ingest.SubmitInterval(c.Request.Context(), scopeOf(c), body, format)
	s.countRecordsLimited(c, err)
	return http.StatusOK, b, err
}

// streamInterval stores a large NDJSON body as it arrives (docs/ingest.md, "Streaming").
func (s *Server) streamInterval(c *gin.Context) (int, any, error) {
	var r io.Reader = c.Request.Body
	switch enc := strings.ToLower(c.GetHeader("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return 0, nil, kwhouse.Invalid("invalid_encoding", "", "the body is not gzip: %v", err)
		}
		defer zr.Close()
		r = zr
	default:
		return 0, nil, kwhouse.Invalid("invalid_encoding", "", "Content-Encoding %q is not supported (use gzip)", enc)
	}
	b, err := s.deps.Ingest.SubmitIntervalStream(c.Request.Context(), scopeOf(c), r, s.deps.IngestStreamChunk)
	s.countRecordsLimited(c, err)
	return http.StatusOK, b, err
}

func (s *Server) putCumulative(c *gin.Context) (int, any, error) {
	body, err := readMeterBody(c, s.deps.IngestMaxBodyBytes)
	if err != nil {
		return 0, nil, err
	}
	var in ingest.CumulativeInput
	if err := decodeJSON(body, &in); err != nil {
		return 0, nil, err
	}
	b, err := s.deps.Ingest.SubmitCumulative(c.Request.Context(), scopeOf(c), in)
	s.countRecordsLimited(c, err)
	return http.StatusOK, b, err
}

func (s *Server) getBatch(c *gin.Context) (int, any, error) {
	id, ok := c.GetQuery("batch_id")
	if !ok || id == "" {
		return 0, nil, kwhouse.Invalid("parameter_missing", "batch_id", "batch_id is required")
	}
	if !kwhouse.ValidID(kwhouse.PrefixBatch, id) {
		return 0, nil, kwhouse.NotFound("batch_id", id)
	}
	b, err := s.deps.Ingest.Batch(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, b, err
}

// readMeterBody reads a body of at most limit bytes, decompressed when gzip-encoded (the
// limit applies to the decompressed size too).
func readMeterBody(c *gin.Context, limit int64) ([]byte, error) {
	if c.Request.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	var r io.Reader = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	switch enc := strings.ToLower(c.GetHeader("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, kwhouse.Invalid("invalid_encoding", "", "the body is not gzip: %v", err)
		}
		defer zr.Close()
		r = io.LimitReader(zr, limit+1)
	default:
		return nil, kwhouse.Invalid("invalid_encoding", "", "Content-Encoding %q is not supported (use gzip)", enc)
	}
	body, err := readAll(r, c.Request.ContentLength, limit)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge(limit)
	case err != nil:
		return nil, kwhouse.Invalid("unreadable_body", "", "could not read the body: %v", err)
	case int64(len(body)) > limit:
		return nil, tooLarge(limit)
	}
	return body, nil
}

// readAll reads r into a buffer sized from the announced length (io.ReadAll would regrow
// and copy a multi-megabyte body a dozen times).
func readAll(r io.Reader, announced, limit int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(max(announced, 0), limit)+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
