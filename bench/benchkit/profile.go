package benchkit

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/chstore"
)

// CPUProfile starts a CPU profile written to path; stop ends it.
func CPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// PrintQueryLog prints, when KWBENCH_LOG_QUERIES is set (ClickHouse then logs kwhouse's
// queries), each kind of query since since whose text holds mark (an account id: other
// processes share the server's query log): how many, and their mean and largest duration
// in ClickHouse (system.query_log). The kind is the query's first 70 characters.
func PrintQueryLog(ctx context.Context, a *app.App, since time.Time, mark string) error {
	if os.Getenv("KWBENCH_LOG_QUERIES") == "" {
		return nil
	}
	if err := a.DB.Exec(ctx, chstore.Tool("SYSTEM FLUSH LOGS")); err != nil {
		return err
	}
	rows, err := a.DB.Query(ctx, chstore.Tool(`SELECT substring(replaceRegexpAll(query, '\\s+', ' '), 1, 70) AS kind,
		count(), avg(query_duration_ms), max(query_duration_ms)
		FROM system.query_log WHERE type = 2 AND event_time >= toDateTime(?) AND position(query, ?) > 0
			AND query NOT LIKE '%system.query_log%'
		GROUP BY kind ORDER BY count() * avg(query_duration_ms) DESC LIMIT 12`), uint32(since.Unix()), mark)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var n uint64
		var mean float64
		var most uint64
		if err := rows.Scan(&kind, &n, &mean, &most); err != nil {
			return err
		}
		fmt.Printf("    %6d × %6.1f ms (max %4d ms)  %s\n", n, mean, most, kind)
	}
	return rows.Err()
}

// QueryLogStart is the start of a measurement PrintQueryLog reports on: with
// KWBENCH_LOG_QUERIES set, the next whole second (after waiting for it), so that queries
// finished before it, in the same second, are not counted; else now.
func QueryLogStart() time.Time {
	now := time.Now()
	if os.Getenv("KWBENCH_LOG_QUERIES") == "" {
		return now
	}
	next := now.Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(next))
	return next
}
