package httpapi

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/accounts"
)

// authenticate accepts "Authorization: Bearer X" where X is a token of GET /login or an
// API key, and puts the account and mode in the request context. The scheme is matched
// without regard to case (RFC 7235 §2.1): FlatPeak's own document spells it "bearer", so
// generated clients send that.
func (s *Server) authenticate(c *gin.Context) {
	token, ok := bearerToken(c.GetHeader("Authorization"))
	if !ok {
		s.writeError(c, &kwhouse.Error{Kind: kwhouse.KindUnauthorized, Code: "missing_credentials",
			Message: "Bad credentials", Param: "Authorization"})
		return
	}
	var scope kwhouse.Scope
	var err error
	if strings.HasPrefix(token, accounts.TestKeyPrefix) || strings.HasPrefix(token, accounts.LiveKeyPrefix) {
		scope, err = s.deps.Accounts.ScopeOfKey(c.Request.Context(), token)
	} else {
		scope, err = s.deps.Tokens.Parse(token)
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Request = c.Request.WithContext(kwhouse.WithScope(c.Request.Context(), scope))
	c.Next()
}

// bearerToken returns X of "Bearer X", the scheme in any case and spaces around X ignored.
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

// authToken is the body of GET /login.
type authToken struct {
	BearerToken string `json:"bearer_token"`
	ExpiresIn   int    `json:"expires_in"`
	LiveMode    bool   `json:"live_mode"`
}

// login exchanges HTTP Basic account_id:api_key for a bearer token.
func (s *Server) login(c *gin.Context) (int, any, error) {
	user, pass, ok := c.Request.BasicAuth()
	if !ok {
		c.Header("WWW-Authenticate", `Basic realm="kwhouse"`)
		return 0, nil, &kwhouse.Error{Kind: kwhouse.KindUnauthorized, Code: "missing_credentials",
			Message: "Bad credentials", Param: "Authorization"}
	}
	scope, err := s.deps.Accounts.Login(c.Request.Context(), user, pass)
	if err != nil {
		return 0, nil, err
	}
	tok, err := s.deps.Tokens.Issue(scope)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, authToken{BearerToken: tok, ExpiresIn: int(s.deps.Tokens.TTL().Seconds()), LiveMode: scope.LiveMode}, nil
}
