package httpapi

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/connect"
)

//go:embed pages/*.html
var pageFiles embed.FS

// pages are the connect page and its "no longer valid" page, compiled into the binary:
// no script, no asset from elsewhere.
var pages = template.Must(template.New("").Funcs(template.FuncMap{"lower": strings.ToLower}).ParseFS(pageFiles, "pages/*.html"))

// createConnectToken answers POST /connect/tariff/token: a pending token and its page.
func (s *Server) createConnectToken(c *gin.Context) (int, any, error) {
	var in connect.InitInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Connect.Create(c.Request.Context(), scopeOf(c), in, baseURL(c))
	return http.StatusOK, out, err
}

// exchangeConnectToken answers GET /connect/tariff/token?connect_token=.
func (s *Server) exchangeConnectToken(c *gin.Context) (int, any, error) {
	out, err := s.deps.Connect.Exchange(c.Request.Context(), scopeOf(c), c.Query("connect_token"))
	return http.StatusOK, out, err
}

// connectBatch answers POST /connect/tariff/batch: one session's tariff without the page.
func (s *Server) connectBatch(c *gin.Context) (int, any, error) {
	var in connect.ImportInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := s.deps.Connect.Batch(c.Request.Context(), scopeOf(c), in)
	return http.StatusOK, out, err
}

// baseURL is the service's address as the caller reached it.
func baseURL(c *gin.Context) string {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.Request.Host
}

// connectPage serves the customer's page (GET) and takes its form (POST). The token in
// the path is the credential; the account and mode beside it only say where to look.
func (s *Server) connectPage(c *gin.Context) {
	scope, ok := kwhouse.ScopeFrom(c.Request.Context())
	ctx := c.Request.Context()
	var view connect.View
	var err error = kwhouse.NotFound("connect_token", c.Param("token"))
	if ok && c.Request.Method == http.MethodPost {
		view, err = s.deps.Connect.Submit(ctx, scope, c.Param("token"), formOf(c))
	} else if ok {
		view, err = s.deps.Connect.Page(ctx, scope, c.Param("token"))
	}
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	c.Header("Cache-Control", "no-store")
	if err != nil {
		status := statusOf[kwhouse.KindOf(err)]
		if status >= 500 || status == 0 {
			s.writeError(c, err) // logged once, as every server-side failure
			return
		}
		s.render(c, status, "gone.html", kwhouse.AsError(err).Message)
		return
	}
	status := http.StatusOK
	if view.Problem != nil {
		status = http.StatusBadRequest
	}
	s.render(c, status, "connect.html", view)
}

func (s *Server) render(c *gin.Context, status int, page string, data any) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, page, data); err != nil {
		s.writeError(c, fmt.Errorf("render %s: %w", page, err))
		return
	}
	c.Data(status, "text/html; charset=utf-8", []byte(b.String()))
}

// pageScope sets the scope a connect page's path names, so that its requests count
// against that account's rate like its API calls; a path naming none has no scope.
func (s *Server) pageScope(c *gin.Context) {
	acc, mode := c.Param("account"), c.Param("mode")
	if kwhouse.ValidID(kwhouse.PrefixAccount, acc) && (mode == "test" || mode == "live") {
		scope := kwhouse.Scope{AccountID: acc, LiveMode: mode == "live"}
		c.Request = c.Request.WithContext(kwhouse.WithScope(c.Request.Context(), scope))
	}
	c.Next()
}

func formOf(c *gin.Context) connect.Form {
	f := connect.Form{Template: c.PostForm("template"), DisplayName: c.PostForm("display_name"),
		ContractStart: c.PostForm("contract_start"), ContractEnd: c.PostForm("contract_end")}
	for i := range f.Rows {
		f.Rows[i] = connect.RateRow{From: c.PostForm(fmt.Sprintf("from_%d", i)), To: c.PostForm(fmt.Sprintf("to_%d", i)),
			Price: c.PostForm(fmt.Sprintf("price_%d", i))}
	}
	return f
}
