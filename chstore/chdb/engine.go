//go:build chdb

package chdb

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/kwhouse/kwhouse/chstore"
)

// Engine is a chstore.Engine on a chDB session, running its statements in one database.
// The Engine Open returns owns the session; those of In share it.
type Engine struct {
	conn     *conn
	database string
	owner    bool
	version  driver.ServerVersion
}

var _ chstore.Engine = (*Engine)(nil)

// Open starts chDB with its data in path (kept there: a later Open of the same path finds
// the databases again), creates database and runs the Engine's statements in it.
func Open(path, database string) (*Engine, error) {
	c, err := connect(path)
	if err != nil {
		return nil, err
	}
	e := &Engine{conn: c, database: database, owner: true}
	if _, err := c.run("", "CREATE DATABASE IF NOT EXISTS "+database, "TabSeparated"); err != nil { // identifier from config
		c.close()
		return nil, fmt.Errorf("chdb create database %s: %w", database, err)
	}
	out, err := c.run("", "SELECT version()", "TabSeparated")
	if err != nil {
		c.close()
		return nil, err
	}
	e.version.Name = "chDB"
	parts := strings.SplitN(strings.TrimSpace(string(out)), ".", 4)
	nums := make([]uint64, 3)
	for i := 0; i < 3 && i < len(parts); i++ {
		nums[i], _ = strconv.ParseUint(parts[i], 10, 64)
	}
	e.version.Version.Major, e.version.Version.Minor, e.version.Version.Patch = nums[0], nums[1], nums[2]
	return e, nil
}

// In returns an Engine on the same session that runs its statements in database, created
// when missing. Its Close leaves the session open: the Engine of Open closes it.
func (e *Engine) In(database string) (*Engine, error) {
	if _, err := e.conn.run("", "CREATE DATABASE IF NOT EXISTS "+database, "TabSeparated"); err != nil { // identifier from config
		return nil, fmt.Errorf("chdb create database %s: %w", database, err)
	}
	return &Engine{conn: e.conn, database: database, version: e.version}, nil
}

// Version returns the engine's ClickHouse version.
func (e *Engine) Version() driver.ServerVersion { return e.version }

// settingsClause renders settings as a SETTINGS clause, in a stable order.
func settingsClause(s chstore.Settings) string {
	if len(s) == 0 {
		return ""
	}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s = %v", k, s[k])
	}
	return " SETTINGS " + strings.Join(parts, ", ")
}

// Query runs a SELECT with settings appended (on a new line: the text may end in a comment).
func (e *Engine) Query(ctx context.Context, s chstore.Settings, sql string) (chstore.Rows, error) {
	sql, err := chstore.InlineExternal(sql, chstore.ExternalsFrom(ctx))
	if err != nil {
		return nil, err
	}
	out, err := e.conn.run(e.database, sql+"\n"+settingsClause(s), "JSONCompact")
	if err != nil {
		return nil, err
	}
	return decodeResult(out)
}

// Exec runs a statement without a result.
func (e *Engine) Exec(_ context.Context, _ chstore.Settings, sql string) error {
	_, err := e.conn.run(e.database, sql, "TabSeparated")
	return err
}

// Ping checks the session answers.
func (e *Engine) Ping(context.Context) error {
	_, err := e.conn.run("", "SELECT 1", "TabSeparated")
	return err
}

// Close ends the session (nothing for an Engine of In).
func (e *Engine) Close() error {
	if e.owner {
		e.conn.close()
	}
	return nil
}

// result is the JSONCompact output of a query.
type result struct {
	Meta []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"meta"`
	Data [][]json.RawMessage `json:"data"`
}

func decodeResult(out []byte) (*rows, error) {
	if len(out) == 0 {
		return &rows{next: -1}, nil
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("decode chdb result: %w", err)
	}
	types := make([]string, len(r.Meta))
	for i, m := range r.Meta {
		types[i] = m.Type
	}
	return &rows{data: r.Data, types: types, next: -1}, nil
}

// rows walks a decoded result.
type rows struct {
	data  [][]json.RawMessage
	types []string
	next  int
	err   error
}

func (r *rows) Next() bool {
	r.next++
	return r.next < len(r.data)
}

func (r *rows) Scan(dest ...any) error {
	row := r.data[r.next]
	if len(dest) != len(row) {
		return fmt.Errorf("scan: %d destinations for %d columns", len(dest), len(row))
	}
	for i, d := range dest {
		if err := scanValue(row[i], r.types[i], d); err != nil {
			return fmt.Errorf("scan column %d (%s): %w", i+1, r.types[i], err)
		}
	}
	return nil
}

func (r *rows) Err() error   { return r.err }
func (r *rows) Close() error { return nil }

var insertHead = regexp.MustCompile(`(?is)^\s*(INSERT\s+INTO\s+\S+\s*\(.*?\))\s*VALUES\s*$`)
