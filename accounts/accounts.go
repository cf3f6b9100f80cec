// Package accounts keeps accounts and their API keys (stored only as hashes), checks
// credentials and issues the bearer tokens of GET /login.
package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// Key prefixes: a test key acts in test mode (live_mode false), a live key in live mode.
const (
	TestKeyPrefix = "sk_test_"
	LiveKeyPrefix = "sk_live_"
)

// Account is a tenant of the service.
type Account struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	TimeCreated time.Time `json:"time_created"`
}

// Created is a new account with its two API keys, shown once and never stored.
type Created struct {
	AccountID string `json:"account_id"`
	TestKey   string `json:"test_key"`
	LiveKey   string `json:"live_key"`
}

// Store reads and writes accounts and keys in ClickHouse, with an in-process key cache
// so that authenticating a request does not cost a query.
type Store struct {
	db       *chstore.DB
	now      func() time.Time
	cacheTTL time.Duration

	mu    sync.Mutex
	cache map[string]cachedKey
	// unknown holds keys looked up and not found, until their expiry (UnknownKeyTTL):
	// repeating an unknown key does not query ClickHouse again.
	unknown    map[string]time.Time
	unknownTTL time.Duration
}

type cachedKey struct {
	scope   kwhouse.Scope
	expires time.Time
}

// NewStore returns a Store on db; now is the clock (time.Now when nil).
func NewStore(db *chstore.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now, cacheTTL: time.Minute, cache: map[string]cachedKey{}, unknown: map[string]time.Time{}}
}

// RememberUnknownFor sets how long a key found unknown is answered as such without a
// lookup (config auth.unknown_key_ttl; 0, the default of a new Store: not remembered).
func (s *Store) RememberUnknownFor(d time.Duration) { s.unknownTTL = d }

// Create makes an account named name with a test and a live key.
func (s *Store) Create(ctx context.Context, name string) (Created, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 255 {
		return Created{}, kwhouse.Invalid("invalid_name", "name", "an account name is 1 to 255 characters")
	}
	c := Created{AccountID: kwhouse.NewID(kwhouse.PrefixAccount), TestKey: newKey(TestKeyPrefix), LiveKey: newKey(LiveKeyPrefix)}
	now := s.now().UTC().Truncate(time.Second)
	if err := s.insertAccount(ctx, c.AccountID, name, now); err != nil {
		return Created{}, err
	}
	if err := s.insertKeys(ctx, c, now); err != nil {
		return Created{}, err
	}
	return c, nil
}

func (s *Store) insertAccount(ctx context.Context, id, name string, now time.Time) error {
	b, err := s.db.Insert(ctx, insertAccountStmt)
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	if err := b.Append(id, name, now, uint64(now.UnixNano())); err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	return b.Send()
}

func (s *Store) insertKeys(ctx context.Context, c Created, now time.Time) error {
	b, err := s.db.Insert(ctx, insertKeyStmt)
	if err != nil {
		return fmt.Errorf("create keys: %w", err)
	}
	for _, k := range []struct {
		key  string
		live uint8
	}{{c.TestKey, 0}, {c.LiveKey, 1}} {
		if err := b.Append(HashKey(k.key), c.AccountID, k.live, now); err != nil {
			return fmt.Errorf("create keys: %w", err)
		}
	}
	return b.Send()
}

// List returns every account, oldest first.
func (s *Store) List(ctx context.Context) ([]Account, error) {
	rows, err := s.db.Query(ctx, listAccountsStmt)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		var a Account
		if err := rows.Scan(&a.ID, &a.Name, &a.TimeCreated); err != nil {
			return nil, fmt.Errorf("scan account: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// ErrBadCredentials is returned for an unknown key or a key of another account.
var ErrBadCredentials = &kwhouse.Error{Kind: kwhouse.KindUnauthorized, Code: "invalid_credentials",
	Message: "Bad credentials"}

// ScopeOfKey returns the account and mode of an API key.
func (s *Store) ScopeOfKey(ctx context.Context, key string) (kwhouse.Scope, error) {
	if !strings.HasPrefix(key, TestKeyPrefix) && !strings.HasPrefix(key, LiveKeyPrefix) {
		return kwhouse.Scope{}, ErrBadCredentials
	}
	h := HashKey(key)
	if sc, ok := s.cached(h); ok {
		return sc, nil
	}
	if s.knownUnknown(h) {
		return kwhouse.Scope{}, ErrBadCredentials
	}
	var account string
	var live uint8
	err := s.db.QueryRow(ctx, scopeOfKeyStmt, h).Scan(&account, &live)
	if err != nil {
		if isNoRows(err) {
			s.rememberUnknown(h)
			return kwhouse.Scope{}, ErrBadCredentials
		}
		return kwhouse.Scope{}, fmt.Errorf("look up api key: %w", err)
	}
	sc := kwhouse.Scope{AccountID: account, LiveMode: live == 1}
	s.remember(h, sc)
	return sc, nil
}

// Login checks an account id and API key pair (HTTP Basic of GET /login).
func (s *Store) Login(ctx context.Context, accountID, key string) (kwhouse.Scope, error) {
	sc, err := s.ScopeOfKey(ctx, key)
	if err != nil {
		return kwhouse.Scope{}, err
	}
	if subtle.ConstantTimeCompare([]byte(sc.AccountID), []byte(accountID)) != 1 {
		return kwhouse.Scope{}, ErrBadCredentials
	}
	return sc, nil
}

// CachedScope returns the scope of an API key this process has looked up recently, with
// no lookup: (zero, false) when it has not.
func (s *Store) CachedScope(key string) (kwhouse.Scope, bool) { return s.cached(HashKey(key)) }

func (s *Store) knownUnknown(hash string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.unknown[hash]
	return ok && s.now().Before(until)
}

// rememberUnknown keeps a key found unknown for unknownTTL; the map is emptied when it
// grows past 100,000 keys (a guessing script cannot grow it without bound).
func (s *Store) rememberUnknown(hash string) {
	if s.unknownTTL <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.unknown) > 100_000 {
		clear(s.unknown)
	}
	s.unknown[hash] = s.now().Add(s.unknownTTL)
}

func (s *Store) cached(hash string) (kwhouse.Scope, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cache[hash]
	if !ok || s.now().After(c.expires) {
		return kwhouse.Scope{}, false
	}
	return c.scope, true
}

func (s *Store) remember(hash string, sc kwhouse.Scope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cache) > 100_000 {
		clear(s.cache)
	}
	s.cache[hash] = cachedKey{scope: sc, expires: s.now().Add(s.cacheTTL)}
}

// HashKey returns the stored form of an API key. Keys carry 256 random bits, so a fast
// hash is enough: there is nothing to brute-force.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func newKey(prefix string) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("accounts: crypto/rand failed: " + err.Error())
	}
	return prefix + hex.EncodeToString(b[:])
}

var insertAccountStmt = chstore.Register("accounts.insert_account", "INSERT INTO accounts (id, name, time_created, version) VALUES")

var insertKeyStmt = chstore.Register("accounts.insert_key", "INSERT INTO api_keys (key_hash, account_id, live_mode, time_created) VALUES")

var listAccountsStmt = chstore.Register("accounts.list", "SELECT id, argMax(name, version), min(time_created) FROM accounts GROUP BY id ORDER BY min(time_created), id")

var scopeOfKeyStmt = chstore.Register("accounts.scope_of_key", "SELECT account_id, live_mode FROM api_keys WHERE key_hash = ? LIMIT 1")
