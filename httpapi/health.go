package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// healthz answers while the process is up.
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readiness is the body of GET /readyz.
type readiness struct {
	Status     string `json:"status"` // ok, degraded (Redis down) or unavailable (ClickHouse down)
	ClickHouse string `json:"clickhouse"`
	Redis      string `json:"redis"`
}

// readyz reports whether the stores answer: 503 without ClickHouse, 200 "degraded"
// without Redis (the service still serves, from ClickHouse).
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	r := readiness{Status: "ok", ClickHouse: "ok", Redis: "ok"}
	if err := s.deps.ClickHouse.Ping(ctx); err != nil {
		r.Status, r.ClickHouse = "unavailable", "down"
	}
	if err := s.deps.Redis.Ping(ctx); err != nil {
		r.Redis = "down"
		if r.Status == "ok" {
			r.Status = "degraded"
		}
	}
	status := http.StatusOK
	if r.Status == "unavailable" {
		status = http.StatusServiceUnavailable
	}
	c.JSON(status, r)
}
