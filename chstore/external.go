package chstore

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	lru "github.com/hashicorp/golang-lru/v2"
)

// External is a table sent along with a query (ClickHouse's external data), which the
// query reads by Name as if it were a table: rows computed beforehand, such as a price
// timeline a statement would otherwise nest as a subquery that 18.16 analyses again at
// every level above it.
type External struct {
	Name    string
	Columns []ExternalColumn
	// Key, when set, names these exact rows for as long as they live: the native engine
	// then encodes the table once and sends the same block with every query that names
	// Key (a new content needs a new Key).
	Key string
}

// ExternalColumn is one column of an External table: Values is a slice of the Go type
// the driver takes for Type ([]uint32 for UInt32, [][]float64 for Array(Float64)), one
// value per row; every column of a table has the same length.
type ExternalColumn struct {
	Name, Type string
	Values     any
}

// Len is the table's number of rows.
func (e External) Len() int {
	if len(e.Columns) == 0 {
		return 0
	}
	return reflect.ValueOf(e.Columns[0].Values).Len()
}

type externalKey struct{}

// WithExternal returns ctx carrying tables for the queries run with it.
func WithExternal(ctx context.Context, tables ...External) context.Context {
	return context.WithValue(ctx, externalKey{}, append(ExternalsFrom(ctx), tables...))
}

// ExternalsFrom returns the external tables ctx carries (engines send them).
func ExternalsFrom(ctx context.Context) []External {
	t, _ := ctx.Value(externalKey{}).([]External)
	return t
}

// Structure is the table's columns as "name Type, …".
func (e External) Structure() string {
	parts := make([]string, len(e.Columns))
	for i, c := range e.Columns {
		parts[i] = c.Name + " " + c.Type
	}
	return strings.Join(parts, ", ")
}

// builtTables keeps the tables built for a Key: a built table is only read afterwards
// (the driver encodes its block for each query), so queries may share it.
var builtTables, _ = lru.New[string, *ext.Table](64)

// nativeTables converts tables for clickhouse-go, a column at a time.
func nativeTables(tables []External) ([]*ext.Table, error) {
	out := make([]*ext.Table, len(tables))
	for i, e := range tables {
		if t, ok := builtTables.Get(e.Key); ok && e.Key != "" {
			out[i] = t
			continue
		}
		cols := make([]func(*ext.Table) error, len(e.Columns))
		for j, c := range e.Columns {
			cols[j] = ext.Column(c.Name, column.Type(c.Type))
		}
		t, err := ext.NewTable(e.Name, cols...)
		if err != nil {
			return nil, fmt.Errorf("external table %s: %w", e.Name, err)
		}
		for j, c := range e.Columns {
			if _, err := t.Block().Columns[j].Append(c.Values); err != nil {
				return nil, fmt.Errorf("external table %s column %s: %w", e.Name, c.Name, err)
			}
		}
		if e.Key != "" {
			builtTables.Add(e.Key, t)
		}
		out[i] = t
	}
	return out, nil
}

// nativeOptions are the query options of settings and ctx's external tables.
func nativeOptions(ctx context.Context, s Settings) ([]clickhouse.QueryOption, error) {
	opts := []clickhouse.QueryOption{clickhouse.WithSettings(clickhouse.Settings(s))}
	if tables := ExternalsFrom(ctx); len(tables) > 0 {
		t, err := nativeTables(tables)
		if err != nil {
			return nil, err
		}
		opts = append(opts, clickhouse.WithExternalTable(t...))
	}
	return opts, nil
}

// InlineExternal rewrites sql for an engine that cannot receive external data (chDB): each
// "FROM name" of a table in tables reads the rows from the format() table function
// instead, the rows one string in the Values format (null() when there are none), as
// current releases have both. One string, not a values() list, whose every value would
// be a node of the syntax tree to analyse: a long price timeline is thousands of rows.
func InlineExternal(sql string, tables []External) (string, error) {
	for _, e := range tables {
		src := fmt.Sprintf("null('%s')", e.Structure())
		if n := e.Len(); n > 0 {
			cols := make([]reflect.Value, len(e.Columns))
			for j, c := range e.Columns {
				cols[j] = reflect.ValueOf(c.Values)
			}
			var b strings.Builder
			for r := 0; r < n; r++ {
				if r > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(")
				for j, col := range cols {
					if j > 0 {
						b.WriteString(", ")
					}
					lit, err := Literal(col.Index(r).Interface())
					if err != nil {
						return "", fmt.Errorf("external table %s: %w", e.Name, err)
					}
					b.WriteString(lit)
				}
				b.WriteString(")")
			}
			data, err := Literal(b.String())
			if err != nil {
				return "", fmt.Errorf("external table %s: %w", e.Name, err)
			}
			src = fmt.Sprintf("format(Values, '%s', %s)", e.Structure(), data)
		}
		re := regexp.MustCompile(`\bFROM\s+` + regexp.QuoteMeta(e.Name) + `\b`)
		sql = re.ReplaceAllLiteralString(sql, "FROM "+src)
	}
	return sql, nil
}
