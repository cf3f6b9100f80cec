package accounts

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/kwhouse/kwhouse"
)

// Tokens issues and checks the HS256 bearer tokens of GET /login.
type Tokens struct {
	secret []byte
	ttl    time.Duration
	now    func() time.Time
}

// NewTokens returns a token issuer signing with secret; tokens live for ttl.
func NewTokens(secret string, ttl time.Duration, now func() time.Time) *Tokens {
	return &Tokens{secret: []byte(secret), ttl: ttl, now: now}
}

type claims struct {
	LiveMode bool `json:"live_mode"`
	jwt.RegisteredClaims
}

// TTL is how long an issued token is valid.
func (t *Tokens) TTL() time.Duration { return t.ttl }

// Issue returns a signed token for scope.
func (t *Tokens) Issue(scope kwhouse.Scope) (string, error) {
	now := t.now()
	c := claims{LiveMode: scope.LiveMode, RegisteredClaims: jwt.RegisteredClaims{
		Subject:   scope.AccountID,
		Issuer:    "kwhouse",
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(t.ttl)),
	}}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.secret)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return s, nil
}

// Parse checks a token's signature and expiry and returns its scope.
func (t *Tokens) Parse(token string) (kwhouse.Scope, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("kwhouse"),
		jwt.WithTimeFunc(t.now), jwt.WithExpirationRequired())
	if err != nil || !kwhouse.ValidID(kwhouse.PrefixAccount, c.Subject) {
		return kwhouse.Scope{}, errors.Join(ErrBadCredentials, err)
	}
	return kwhouse.Scope{AccountID: c.Subject, LiveMode: c.LiveMode}, nil
}
