package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// TestPricedBucketsRacingWritersGiveRowsOfSomeInstant races writers (new readings, re-sent
// readings, market prices of past days) with fleet reads of two processes keeping priced
// buckets, one of them answering through the shared answer cache: every row of an answer
// must equal the row of a fresh, unkept pricing of the data as stored at some instant
// during that request.
func TestPricedBucketsRacingWritersGiveRowsOfSomeInstant(t *testing.T) {
	f := newBucketFleetWith(t, apitest.Options{Configure: answerCacheOn})
	ctx := context.Background()
	fresh := query.WithoutBuckets(f.api.App.Pricer)
	readers := []*query.Pricer{query.WithBuckets(fresh), query.WithBuckets(fresh)}
	req := query.FleetRequest{Start: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 6, 0, 0, 0, 0, time.UTC),
		Aggregation: query.AggregationDay, Limit: 10000}
	cached := func(c *query.Pricer) (out query.FleetCost, err error) {
		b, err := c.FleetEncoded(ctx, f.scope, req, "json", func(a query.FleetCost) ([]byte, error) { return json.Marshal(a) })
		if err == nil {
			err = json.Unmarshal(b, &out)
		}
		return out, err
	}
	answer := func(c *query.Pricer) map[string]query.FleetRow {
		out, err := c.Fleet(ctx, f.scope, req)
		if c == readers[1] {
			out, err = cached(c)
		}
		if err != nil {
			t.Error(err)
			return nil
		}
		rows := map[string]query.FleetRow{}
		for _, r := range out.Data {
			rows[r.LocationID+" "+r.Date] = r
		}
		return rows
	}
	n := raceWrites(t, f, []string{f.a, f.b}, func() map[string]query.FleetRow { return answer(fresh) },
		func(i int) map[string]query.FleetRow { return answer(readers[i%2]) })
	t.Logf("%d reads raced 16 writes; buckets %+v and %+v; answers %+v", n, readers[0].BucketCounts(),
		readers[1].BucketCounts(), readers[1].AnswerCounts())
}

// raceWrites races 16 writes (new readings, re-sent readings, market prices of past days)
// of the locations locs with reads (read(i), the i-th) until the writes end: every row of
// each read must be a row of fresh (a fresh pricing) as stored after one of the writes
// done during that read (snapshots[k] is fresh after the k-th write, before the next). It
// returns how many reads raced.
func raceWrites(t *testing.T, f *bucketFleet, locs []string, fresh func() map[string]query.FleetRow,
	read func(i int) map[string]query.FleetRow) int {
	t.Helper()
	var mu sync.Mutex
	snapshots := []map[string]query.FleetRow{fresh()}
	var started, written atomic.Int64
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for k := 1; k <= 16; k++ {
			day := time.Date(2024, 3, 1+rng.Intn(5), rng.Intn(24), 0, 0, 0, time.UTC)
			loc := locs[rng.Intn(len(locs))]
			started.Store(int64(k))
			switch k % 3 {
			case 0: // a new reading, half-past: no earlier one has its key
				f.readings(loc, day.Add(30*time.Minute), 1, float64(100+rng.Intn(900)))
			case 1: // a re-sent reading: the latest version counts
				f.readings(loc, day, 1, float64(100+rng.Intn(900)))
			case 2: // A's market prices of a past day
				f.prices(day.Truncate(24*time.Hour), day.Truncate(24*time.Hour).Add(24*time.Hour), float64(rng.Intn(50))/100)
			}
			written.Store(int64(k))
			snap := fresh()
			mu.Lock()
			snapshots = append(snapshots, snap)
			mu.Unlock()
		}
	}()
	type raced struct {
		from, to int64
		rows     map[string]query.FleetRow
	}
	var reads []raced
	for i := 0; ; i++ {
		select {
		case <-done:
		default:
			from := written.Load()
			rows := read(i)
			reads = append(reads, raced{from: from, to: started.Load(), rows: rows})
			continue
		}
		break
	}
	if len(reads) < 4 {
		t.Fatalf("only %d reads raced the writer", len(reads))
	}
	for i, r := range reads {
		for _, problem := range rowsOfSomeInstant(r.rows, snapshots[r.from:r.to+1]) {
			t.Errorf("read %d (during writes %d–%d): %s", i, r.from, r.to, problem)
		}
	}
	return len(reads)
}

// rowsOfSomeInstant lists the rows of got (and the rows missing from it) that no snapshot has.
func rowsOfSomeInstant(got map[string]query.FleetRow, snapshots []map[string]query.FleetRow) []string {
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for _, s := range snapshots {
		for k := range s {
			keys[k] = true
		}
	}
	var problems []string
	for k := range keys {
		g, have := got[k]
		ok := false
		for _, s := range snapshots {
			w, there := s[k]
			if have == there && (!have || (close6(float64(g.Energy.ValueExact), float64(w.Energy.ValueExact)) &&
				close6(float64(g.Tariff.Value), float64(w.Tariff.Value)) && close6(float64(g.Tariff.Confidence), float64(w.Tariff.Confidence)))) {
				ok = true
				break
			}
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %+v (present %t) is in no state of the data during the request", k, g, have))
		}
	}
	return problems
}
