package httpapi

import (
	"mime"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/strictjson"
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
	markRefused(c, b, err)
	return http.StatusOK, b, err
}

// streamInterval stores a large NDJSON body as it arrives (docs/ingest.md, "Streaming").
func (s *Server) streamInterval(c *gin.Context) (int, any, error) {
	r, done, err := decodedBody(c, c.Request.Body)
	if err != nil {
		return 0, nil, err
	}
	defer done()
	b, err := s.deps.Ingest.SubmitIntervalStream(c.Request.Context(), scopeOf(c), r, s.deps.IngestStreamChunk)
	s.countRecordsLimited(c, err)
	markRefused(c, b, err)
	return http.StatusOK, b, err
}

func (s *Server) putCumulative(c *gin.Context) (int, any, error) {
	r, done, err := uploadBody(c, s.deps.SeriesMaxBodyBytes)
	if err != nil {
		return 0, nil, err
	}
	defer done()
	var in ingest.CumulativeInput
	// Read as it arrives: past the readings' bound (413) nothing more is read.
	if err := strictjson.DecodeWithArray(r, &in, "data", &in.Data, s.deps.Ingest.ReadingsBound()); err != nil {
		return 0, nil, streamError(err)
	}
	b, err := s.deps.Ingest.SubmitCumulative(c.Request.Context(), scopeOf(c), in)
	s.countRecordsLimited(c, err)
	markRefused(c, b, err)
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
