//go:build chdb

package chdb

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/kwhouse/kwhouse/chstore"
)

// batch collects an INSERT's rows and sends them as one INSERT … VALUES, every value
// rendered by chstore.Literal, the binder the service uses.
type batch struct {
	e        *Engine
	head     string
	settings chstore.Settings
	rows     [][]any
	cols     map[int]any
}

// PrepareBatch starts an INSERT of the columns sql names.
func (e *Engine) PrepareBatch(_ context.Context, s chstore.Settings, sql string) (chstore.Batch, error) {
	m := insertHead.FindStringSubmatch(sql)
	if m == nil {
		return nil, fmt.Errorf("%w: not an INSERT INTO t (cols) VALUES: %q", ErrQuery, sql)
	}
	return &batch{e: e, head: m[1], settings: s, cols: map[int]any{}}, nil
}

func (b *batch) Append(values ...any) error {
	b.rows = append(b.rows, values)
	return nil
}

func (b *batch) Column(i int) chstore.BatchColumn { return column{b, i} }

type column struct {
	b *batch
	i int
}

// Append keeps a copy of values: the caller may reuse its slice (chstore.BatchColumn).
func (c column) Append(values any) error {
	v := reflect.ValueOf(values)
	if v.Kind() != reflect.Slice {
		return fmt.Errorf("column %d: append of %T, want a slice", c.i, values)
	}
	kept := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
	reflect.Copy(kept, v)
	c.b.cols[c.i] = kept.Interface()
	return nil
}

func (b *batch) Abort() error { b.rows, b.cols = nil, nil; return nil }

// Send renders the rows (or the columns, row by row) and runs the INSERT.
func (b *batch) Send() error {
	rows, err := b.allRows()
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteString(b.head)
	sb.WriteString(settingsClause(b.settings))
	sb.WriteString(" VALUES ")
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('(')
		for j, v := range r {
			if j > 0 {
				sb.WriteString(", ")
			}
			lit, err := chstore.Literal(v)
			if err != nil {
				return fmt.Errorf("row %d column %d: %w", i, j, err)
			}
			sb.WriteString(lit)
		}
		sb.WriteByte(')')
	}
	return b.e.Exec(context.Background(), nil, sb.String())
}

func (b *batch) allRows() ([][]any, error) {
	if len(b.cols) == 0 {
		return b.rows, nil
	}
	if len(b.rows) > 0 {
		return nil, fmt.Errorf("batch mixes rows and columns")
	}
	n := -1
	for i := 0; i < len(b.cols); i++ {
		c, ok := b.cols[i]
		if !ok {
			return nil, fmt.Errorf("column %d not appended", i)
		}
		l := reflect.ValueOf(c).Len()
		if n >= 0 && l != n {
			return nil, fmt.Errorf("column %d has %d values, column 0 has %d", i, l, n)
		}
		n = l
	}
	out := make([][]any, n)
	for r := range out {
		out[r] = make([]any, len(b.cols))
		for i := range out[r] {
			out[r][i] = reflect.ValueOf(b.cols[i]).Index(r).Interface()
		}
	}
	return out, nil
}
