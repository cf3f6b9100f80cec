package httpapi

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/query"
)

// limitRequests is the middleware of every authenticated API route but meter pushes (whose
// records are charged by count, in ingest).
func (s *Server) limitRequests(c *gin.Context) {
	if err := s.deps.Limits.TakeRequest(c.Request.Context(), scopeOf(c)); err != nil {
		s.deps.Limits.Count(scopeOf(c).AccountID, c.FullPath(), "rate_limit")
		s.writeError(c, err)
		return
	}
	c.Next()
}

// admitQuery runs a heavy query's handler when the process and the account have a free
// turn, after a short wait at most; a full queue answers 503 at once. Its reads run at
// ClickHouse's background priority.
func (s *Server) admitQuery(c *gin.Context) {
	release, ok := s.enterQuery(c)
	if !ok {
		return
	}
	defer release()
	ctx, sent := query.WithAnswerSending(chstore.Background(c.Request.Context()))
	defer sent() // the answer is written: its write-backs and cache store start
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}

// admitRead runs a heavy read's handler (timelines, slots, location status) under the
// same turns as admitQuery, at normal priority: interactive callers wait on these.
func (s *Server) admitRead(c *gin.Context) {
	release, ok := s.enterQuery(c)
	if !ok {
		return
	}
	defer release()
	c.Next()
}

// enterQuery takes a query turn, or answers 503 and reports false. The turn is taken once
// the whole body has arrived: a client that sends slowly holds no turn while it does (and
// is cut off at http.read_timeout). The turn ends when the answer is written, or when
// writing it fails because the client stopped reading: the answer is due
// http.write_timeout after the turn began.
func (s *Server) enterQuery(c *gin.Context) (release func(), ok bool) {
	body, err := readBody(c)
	if err != nil {
		s.writeError(c, err)
		return nil, false
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	release, err = s.deps.Limits.EnterQuery(c.Request.Context(), scopeOf(c).AccountID)
	if err != nil {
		s.deps.Limits.Count(scopeOf(c).AccountID, c.FullPath(), "shed")
		s.writeError(c, err)
		return nil, false
	}
	if d := s.deps.WriteTimeout; d > 0 {
		// The answer is due http.write_timeout after the turn began, not after the
		// request arrived: waiting for the turn does not eat the query's time.
		_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Now().Add(d))
	}
	return release, true
}

// countRecordsLimited counts a meter push refused for the account's record rate.
func (s *Server) countRecordsLimited(c *gin.Context, err error) {
	if kwhouse.KindOf(err) == kwhouse.KindRateLimited {
		s.deps.Limits.Count(scopeOf(c).AccountID, c.FullPath(), "records_limit")
	}
}

// retryAfterSeconds is the Retry-After value of a wait: whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// refusedKey marks, in the request's gin context, an upload answered 200 of which no
// record was stored: refused as a 400 would be.
const refusedKey = "kwhouse.upload_refused"

// admitUpload runs an upload's handler (meter records and readings, market prices, carbon
// intensities) under one of its account's upload turns, taken before the body is read:
// reading and decoding it is the work. An upload refused for its body is charged to the
// account's refused uploads (docs/operations.md, "Limits").
func (s *Server) admitUpload(c *gin.Context) {
	account := scopeOf(c).AccountID
	turn, err := s.deps.Limits.EnterUpload(c.Request.Context(), account)
	if err != nil {
		reason := "uploads"
		if e := kwhouse.AsError(err); e != nil && e.Code == "too_many_refused_uploads" {
			reason = "refused_uploads"
		}
		s.deps.Limits.Count(account, c.FullPath(), reason)
		s.writeError(c, err)
		return
	}
	defer func() {
		status := c.Writer.Status()
		refused := c.GetBool(refusedKey) || status == http.StatusBadRequest ||
			status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity
		turn.Done(context.WithoutCancel(c.Request.Context()), refused, !refused && status < 300)
	}()
	c.Next()
}

// markRefused marks an upload of which no record was stored (every one failed) as refused.
func markRefused(c *gin.Context, b ingest.Batch, err error) {
	if err == nil && b.RecordsAccepted == 0 && b.FailedRecordsCount > 0 {
		c.Set(refusedKey, true)
	}
}
