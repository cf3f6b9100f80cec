package chstore

import (
	"context"
	"sync"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
)

// StringSize is the final size of one String column of an insert: rows and bytes of
// text in all. An insert that knows them lets the driver allocate the column once.
type StringSize struct {
	Column      string
	Rows, Bytes int
}

// InsertBulk is Insert for large blocks (the meter writer's): String columns start at
// their final sizes, and the batch runs on a pool of its own. clickhouse-go grows each
// String column from empty by doubling, and each connection's send buffer to the largest
// block it sent; its pool hands out idle connections in turn, so mixed with the serving
// pool's many connections every one of them would grow a block-sized buffer. Left to the
// driver, the two make over half of the service's page faults in a fleet's ingest.
func (db *DB) InsertBulk(ctx context.Context, st Statement, sizes []StringSize) (Batch, error) {
	db.observe(st)
	return classifiedBatch(db.bulk.PrepareBatch(context.WithValue(ctx, stringSizesKey{}, sizes), db.write, st.SQL))
}

type stringSizesKey struct{}

func sizesFrom(ctx context.Context) []StringSize {
	s, _ := ctx.Value(stringSizesKey{}).([]StringSize)
	return s
}

// armedSizes are the sizes of inserts being prepared, by column name. The driver has one
// process-wide hook for new String columns and tells it only the column's name, so a
// size is armed just before an insert's PrepareBatch and taken by the first new String
// column of that name. If another query's column of the same name takes it first, that
// column merely starts with room it may not use, and the insert grows its own from empty:
// no buffer is ever shared, so a mix-up costs memory for a moment, never correctness.
type armedSizes struct {
	mu    sync.Mutex
	next  uint64
	armed map[string][]armedSize
}

type armedSize struct {
	id          uint64
	rows, bytes int
}

var stringSizes = &armedSizes{armed: map[string][]armedSize{}}

func init() { column.WithColStrProvider(stringSizes.take) }

// arm registers sizes and returns the func that withdraws those not taken.
func (a *armedSizes) arm(sizes []StringSize) (disarm func()) {
	if len(sizes) == 0 {
		return func() {}
	}
	a.mu.Lock()
	a.next++
	id := a.next
	for _, s := range sizes {
		a.armed[s.Column] = append(a.armed[s.Column], armedSize{id: id, rows: s.Rows, bytes: s.Bytes})
	}
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, s := range sizes {
			list := a.armed[s.Column]
			for i := range list {
				if list[i].id == id {
					list = append(list[:i], list[i+1:]...)
					break
				}
			}
			if len(list) == 0 {
				delete(a.armed, s.Column)
			} else {
				a.armed[s.Column] = list
			}
		}
	}
}

// take is the driver's hook: a new String column, sized if an insert armed its name.
func (a *armedSizes) take(name string) proto.ColStr {
	a.mu.Lock()
	list, ok := a.armed[name]
	if !ok {
		a.mu.Unlock()
		return proto.ColStr{}
	}
	s := list[0]
	if len(list) == 1 {
		delete(a.armed, name)
	} else {
		a.armed[name] = list[1:]
	}
	a.mu.Unlock()
	return proto.ColStr{Buf: make([]byte, 0, s.bytes), Pos: make([]proto.Position, 0, s.rows)}
}
