package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/gin-gonic/gin"
)

// writeJSON encodes body whole before anything is written: a body that cannot be encoded
// (a number JSON cannot hold) is a 500 with the error body, never a status already sent
// with an empty or cut body.
func (s *Server) writeJSON(c *gin.Context, status int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		s.writeError(c, fmt.Errorf("encode %s response: %w", c.FullPath(), err))
		return
	}
	c.Data(status, "application/json; charset=utf-8", b)
}
