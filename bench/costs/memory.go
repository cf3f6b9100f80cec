package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// answer is one timed request of a fleet shape: when it ran and the Go bytes the process
// allocated meanwhile (the server runs in this process; the bench's own HTTP client and
// its reading of the body are counted too).
type answer struct {
	t0, t1  time.Time
	goBytes uint64
	// decode is the part of [t0, t1] the client spent decoding JSON pages after their
	// last byte arrived (a paged shape's client must read next_cursor to go on).
	decode time.Duration
}

// nextSecond waits for the next whole second: system.query_log dates statements by the
// second, so a request started on a second boundary, and followed by a wait for the next
// one, has those seconds to itself (the shape's changes run outside them).
func nextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second).Sub(now))
}

// timeAnswer runs ask as one timed request.
func timeAnswer(ask func() error) (answer, error) {
	nextSecond()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	a := answer{t0: time.Now()}
	err := ask()
	a.t1 = time.Now()
	runtime.ReadMemStats(&m1)
	a.goBytes = m1.TotalAlloc - m0.TotalAlloc
	nextSecond()
	return a, err
}

// memory is the memory per answer of a shape: ClickHouse's largest memory_usage of one of
// an answer's statements (its queries on every node, the shards' parts of a distributed
// one included), the sum over an answer's statements, and the Go bytes allocated (medians
// over the answers, and the largest peak), and ClickHouse's user CPU summed over an
// answer's statements (median, microseconds).
type memory struct {
	chPeakMax, chPeak, chSum, goBytes, chCPU uint64
}

func (m memory) String() string {
	mib := func(b uint64) float64 { return float64(b) / (1 << 20) }
	return fmt.Sprintf("ClickHouse peak %.0f MiB (largest %.0f), summed %.0f MiB, CPU %.0f ms; Go %.1f MiB allocated",
		mib(m.chPeak), mib(m.chPeakMax), mib(m.chSum), float64(m.chCPU)/1000, mib(m.goBytes))
}

// answerMemory reads each answer's statements from system.query_log of every node in addrs
// (the account's statements that started and finished within the answer's seconds; a node
// that never logged a query has no log to read).
func answerMemory(ctx context.Context, addrs, account string, answers []answer) (memory, error) {
	peaks, sums, cpus := make([]uint64, len(answers)), make([]uint64, len(answers)), make([]uint64, len(answers))
	for _, addr := range strings.Split(addrs, ",") {
		if err := nodeMemory(ctx, addr, account, answers, peaks, sums, cpus); err != nil {
			return memory{}, fmt.Errorf("memory of the answers on %s: %w", addr, err)
		}
	}
	var out memory
	gos := make([]uint64, len(answers))
	for i, an := range answers {
		gos[i] = an.goBytes
		out.chPeakMax = max(out.chPeakMax, peaks[i])
	}
	out.chPeak, out.chSum, out.goBytes, out.chCPU = median(peaks), median(sums), median(gos), median(cpus)
	return out, nil
}

// nodeMemory adds one node's statements of each answer to peaks, sums and cpus.
func nodeMemory(ctx context.Context, addr, account string, answers []answer, peaks, sums, cpus []uint64) error {
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}})
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
		return err
	}
	var logs uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = 'system' AND name = 'query_log'").Scan(&logs); err != nil || logs == 0 {
		return err
	}
	for i, an := range answers {
		var peak, sum, cpu uint64
		if err := conn.QueryRow(ctx, `SELECT max(memory_usage), sum(memory_usage),
			sum(ProfileEvents.Values[indexOf(ProfileEvents.Names, 'UserTimeMicroseconds')]) FROM system.query_log
			WHERE type = 2 AND query_start_time >= toDateTime(?) AND event_time <= toDateTime(?) AND position(query, ?) > 0`,
			uint32(an.t0.Unix()), uint32(an.t1.Unix()), account).Scan(&peak, &sum, &cpu); err != nil {
			return err
		}
		peaks[i], sums[i], cpus[i] = max(peaks[i], peak), sums[i]+sum, cpus[i]+cpu
	}
	return nil
}

func median(v []uint64) uint64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
