package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
)

const requestIDKey = "request_id"

// requestID gives every request an id, echoed in X-Request-Id and error bodies.
func (s *Server) requestID(c *gin.Context) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "req_" + hex.EncodeToString(b[:])
	c.Set(requestIDKey, id)
	c.Header("X-Request-Id", id)
	c.Next()
}

func requestIDOf(c *gin.Context) string { return c.GetString(requestIDKey) }

// recover turns a panic into a 500 with the error body; the panic is logged.
func (s *Server) recover(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			s.writeError(c, fmt.Errorf("panic: %v", r))
		}
	}()
	c.Next()
}

// logRequests writes one structured line per request.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	lvl := slog.LevelInfo
	if c.Writer.Status() >= 500 {
		lvl = slog.LevelWarn
	}
	s.deps.Log.Log(c.Request.Context(), lvl, "http request", "request_id", requestIDOf(c),
		"method", c.Request.Method, "route", c.FullPath(), "status", c.Writer.Status(),
		"duration_ms", float64(time.Since(start).Microseconds())/1000, "bytes", c.Writer.Size())
}
