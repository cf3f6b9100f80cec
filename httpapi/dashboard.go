package httpapi

import (
	"io/fs"
	"mime"
	"net/http"
	"path"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/dashboard"
)

// dashboardPolicy lets the page load only its own files and call only this server: no
// inline script, no other origin (the key the user enters goes nowhere else).
const dashboardPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' blob:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// dashboardFile serves GET /dashboard (index.html) and GET /dashboard/{file}: the page
// needs no credentials, it carries no data (docs/dashboard.md).
func (s *Server) dashboardFile(c *gin.Context) {
	name := c.Param("file")
	if name == "" {
		name = "index.html"
	}
	body, err := fs.ReadFile(dashboard.Assets(), name)
	if err != nil || path.Base(name) != name {
		s.writeError(c, &kwhouse.Error{Kind: kwhouse.KindNotFound, Code: "route_not_found",
			Message: "the dashboard has no file " + name})
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", dashboardPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	c.Data(http.StatusOK, mime.TypeByExtension(path.Ext(name)), body)
}
