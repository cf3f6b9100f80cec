package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// uploadTime gives an upload (meter records and readings, market prices, carbon
// intensities) ingest.body_timeout to be read and answered, in place of the server's
// http.read_timeout and http.write_timeout, which are sized for small bodies.
func (s *Server) uploadTime(c *gin.Context) {
	var at time.Time // zero: no deadline
	if d := s.deps.UploadTimeout; d > 0 {
		at = time.Now().Add(d)
	}
	rc := http.NewResponseController(c.Writer)
	// Errors only where the connection cannot have deadlines; then the server's stay.
	_ = rc.SetReadDeadline(at)
	_ = rc.SetWriteDeadline(at)
	c.Next()
}
