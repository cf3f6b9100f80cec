package httpapi

import (
	"context"
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
		scope, err = s.checkKey(c, token, func(ctx context.Context) (kwhouse.Scope, error) {
			return s.deps.Accounts.ScopeOfKey(ctx, token)
		})
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
	scope, err := s.checkKey(c, pass, func(ctx context.Context) (kwhouse.Scope, error) {
		return s.deps.Accounts.Login(ctx, user, pass)
	})
	if err != nil {
		return 0, nil, err
	}
	tok, err := s.deps.Tokens.Issue(scope)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, authToken{BearerToken: tok, ExpiresIn: int(s.deps.Tokens.TTL().Seconds()), LiveMode: scope.LiveMode}, nil
}

// checkKey runs check, an authentication with the API key key, under the source
// address's limit of failed authentications (limits.auth_failures_per_minute): a failure
// is charged to the address, and past the limit answers 429. An address over its limit
// is refused before check runs (no key lookup), unless the key is one this process
// already knows. The address is the connection's peer: forwarding headers are not read.
func (s *Server) checkKey(c *gin.Context, key string, check func(context.Context) (kwhouse.Scope, error)) (kwhouse.Scope, error) {
	ctx, source := c.Request.Context(), c.RemoteIP()
	if _, known := s.deps.Accounts.CachedScope(key); !known {
		if err := s.deps.Limits.AuthAllowed(source); err != nil {
			return kwhouse.Scope{}, err
		}
	}
	scope, err := check(ctx)
	if kwhouse.KindOf(err) == kwhouse.KindUnauthorized {
		if limited := s.deps.Limits.TakeAuthFailure(ctx, source, c.FullPath()); limited != nil {
			return kwhouse.Scope{}, limited
		}
	}
	return scope, err
}
