package kwhouse

import "context"

// Scope is the account and mode a request acts in. Every read and write is confined to
// one scope: objects of another account or mode do not exist for it.
type Scope struct {
	AccountID string
	LiveMode  bool
}

type scopeKey struct{}

// WithScope returns ctx carrying s.
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the scope in ctx and whether there is one.
func ScopeFrom(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(scopeKey{}).(Scope)
	return s, ok
}

// LiveByte is the scope's mode as ClickHouse stores it in live_mode columns: 1 live, 0 test.
func (s Scope) LiveByte() uint8 {
	if s.LiveMode {
		return 1
	}
	return 0
}
