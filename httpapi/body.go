package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/strictjson"
)

// decodedBody is the body as sent, gunzipped when its Content-Encoding is gzip; done
// releases the decompressor.
func decodedBody(c *gin.Context, r io.Reader) (io.Reader, func(), error) {
	switch enc := strings.ToLower(c.GetHeader("Content-Encoding")); enc {
	case "", "identity":
		return r, func() {}, nil
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, kwhouse.Invalid("invalid_encoding", "", "the body is not gzip: %v", err)
		}
		return zr, func() { _ = zr.Close() }, nil
	default:
		return nil, nil, kwhouse.Invalid("invalid_encoding", "", "Content-Encoding %q is not supported (use gzip)", enc)
	}
}

// uploadBody is the body decoded (decodedBody) and bounded at limit bytes both as sent and
// after decoding: reading past either fails with *http.MaxBytesError, so a small gzip
// body that inflates to gigabytes stops at limit.
func uploadBody(c *gin.Context, limit int64) (io.Reader, func(), error) {
	if c.Request.ContentLength > limit {
		return nil, nil, tooLarge(limit)
	}
	r, done, err := decodedBody(c, http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		return nil, nil, err
	}
	return http.MaxBytesReader(c.Writer, io.NopCloser(r), limit), done, nil
}

// readMeterBody reads a body of at most limit bytes, decompressed when gzip-encoded (the
// limit applies to the decompressed size too).
func readMeterBody(c *gin.Context, limit int64) ([]byte, error) {
	r, done, err := uploadBody(c, limit)
	if err != nil {
		return nil, err
	}
	defer done()
	body, err := readAll(r, c.Request.ContentLength, limit)
	if err != nil {
		return nil, bodyReadError(err)
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

// decodeSeries reads a JSON array body of at most limit bytes (after gzip) element by
// element, stopping with b's 413 past its count: neither the body nor more than b.Max
// elements are ever held whole.
func decodeSeries[T any](c *gin.Context, limit int64, b strictjson.Bound) ([]T, error) {
	r, done, err := uploadBody(c, limit)
	if err != nil {
		return nil, err
	}
	defer done()
	items, err := strictjson.DecodeArray[T](r, b)
	return items, streamError(err)
}

// streamError answers a streamed decoding's failure: its own error, or the body's read
// error (413 past the byte limit).
func streamError(err error) error {
	if err == nil || kwhouse.AsError(err) != nil {
		return err
	}
	return bodyReadError(err)
}
