package query

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

var fleetCellsStmt = chstore.Register("query.fleet_cells", "fleet_cells.sql: fingerprints of the rows of a fleet's buckets")

// cellsShape picks the parts of fleet_cells.sql a query needs.
type cellsShape struct {
	Aggregation string
	Devices     bool
	Whole       bool // the batches hold every location of the scope: no id list
	Parts       bool // only the parts @parts, each one's sums apart
}

// cellRow is a row of fleet_cells.sql.
type cellRow struct {
	loc, dev string
	k        uint32
	mine     uint8
	fp       uint64
	part     string // with cellsShape.Parts
}

// bucketPrint is the fingerprint of a bucket's rows, with a tiered bucket's chain.
type bucketPrint struct {
	loc, dev  string
	k         uint32
	fp, chain uint64
}

// groupID is a location and device.
type groupID struct{ loc, dev string }

// zonePrints reads the fingerprints of the buckets of one zone's batches, and those of
// tiered locations' rows before the window (rows with loc and dev only), side by side.
// With parts, only those parts are read, main ones for the window and look ones before
// it, and each row names its part.
func (c *Pricer) zonePrints(ctx context.Context, scope kwhouse.Scope, req FleetRequest, zone string, batches []fleetBatch,
	plans map[string]tariffs.Plan, whole bool, parts *partLists) ([]cellRow, []cellRow, error) {
	shape := cellsShape{Aggregation: req.Aggregation, Devices: req.GroupBy == GroupDevice, Whole: whole, Parts: parts != nil}
	var ids, tiered []string
	var lookbacks []uint32
	lookback := req.Start.Unix()
	for _, b := range batches {
		ids = append(ids, b.ids...)
		for _, id := range b.ids {
			if b.tiered && plans[id].Lookback < req.Start.Unix() {
				tiered, lookbacks = append(tiered, id), append(lookbacks, uint32(plans[id].Lookback))
				lookback = min(lookback, plans[id].Lookback)
			}
		}
	}
	args := []any{chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()),
		chstore.Named("dir", req.Direction), chstore.Named("tz", zone),
		chstore.Named("w0", uint32(req.Start.Unix())), chstore.Named("w1", uint32(req.End.Unix()))}
	var rows, before []cellRow
	g, gctx := errgroup.WithContext(ctx)
	if parts == nil || len(parts.main) > 0 {
		g.Go(func() error {
			var err error
			a := append(args, chstore.Named("locs", chstore.Set(ids)))
			if parts != nil {
				a = append(a, chstore.Named("parts", chstore.Set(parts.main)))
			}
			rows, err = c.cellRows(gctx, "fleet_cells", shape, a)
			return err
		})
	}
	lookShape := shape
	lookShape.Whole = false
	if len(tiered) > 0 && (parts == nil || len(parts.look) > 0) {
		g.Go(func() error {
			var err error
			a := append(args, chstore.Named("locs", chstore.Set(tiered)), chstore.Named("locs_arr", tiered),
				chstore.Named("lookbacks", lookbacks), chstore.Named("lookback", uint32(lookback)))
			if parts != nil {
				a = append(a, chstore.Named("parts", chstore.Set(parts.look)))
			}
			before, err = c.cellRows(gctx, "fleet_cells_lookback", lookShape, a)
			return err
		})
	}
	return rows, before, g.Wait()
}

// preOf sums the lookback rows' fingerprints per location and device.
func preOf(before []cellRow) map[groupID]uint64 {
	pre := map[groupID]uint64{}
	for _, r := range before {
		pre[groupID{r.loc, r.dev}] += r.fp
	}
	return pre
}

// cellRows runs a fleet_cells.sql template; fleet_cells_lookback has no k or mine.
func (c *Pricer) cellRows(ctx context.Context, name string, shape cellsShape, args []any) ([]cellRow, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, shape); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	rows, err := c.db.Query(ctx, fleetCellsStmt.With(buf.String()), args...)
	if err != nil {
		return nil, fmt.Errorf("fleet cells query: %w", err)
	}
	defer rows.Close()
	var out []cellRow
	for rows.Next() {
		var r cellRow
		dest := []any{&r.loc, &r.dev, &r.k, &r.mine, &r.fp}
		if name == "fleet_cells_lookback" {
			dest = []any{&r.loc, &r.dev, &r.fp}
		}
		if shape.Parts {
			dest = append(dest, &r.part)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan fleet cell: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// batchPrints turns a batch's cell rows into bucket fingerprints: an untiered bucket's of
// its rows of the asked direction; a tiered one's of both, chained from the lookback's
// (pre) through every bucket up to it, in location, device and bucket order.
func batchPrints(rows []cellRow, tiered bool, pre map[groupID]uint64) []bucketPrint {
	if tiered {
		sort.Slice(rows, func(i, j int) bool {
			a, b := rows[i], rows[j]
			if a.loc != b.loc || a.dev != b.dev {
				return a.loc < b.loc || a.loc == b.loc && a.dev < b.dev
			}
			return a.k < b.k || a.k == b.k && a.mine < b.mine
		})
	}
	out := make([]bucketPrint, 0, len(rows))
	var chain uint64
	for i, r := range rows {
		if !tiered {
			if r.mine == 1 {
				out = append(out, bucketPrint{loc: r.loc, dev: r.dev, k: r.k, fp: r.fp})
			}
			continue
		}
		newGroup := i == 0 || r.loc != rows[i-1].loc || r.dev != rows[i-1].dev
		if newGroup {
			chain = pre[groupID{r.loc, r.dev}]
		}
		chain += r.fp
		if !newGroup && r.k == rows[i-1].k { // the other direction's rows of the same bucket
			out[len(out)-1].fp += r.fp
			out[len(out)-1].chain = chain
			continue
		}
		out = append(out, bucketPrint{loc: r.loc, dev: r.dev, k: r.k, fp: r.fp, chain: chain})
	}
	return out
}

// chainSums gives each priced tiered bucket its chain, as chainPrints does; sums are in
// location, device and bucket order.
func chainSums(sums []fleetSum) []uint64 {
	out := make([]uint64, len(sums))
	var chain uint64
	for i, s := range sums {
		if i == 0 || s.Loc != sums[i-1].Loc || s.Dev != sums[i-1].Dev {
			chain = s.Pre
		}
		chain += s.Fp
		out[i] = chain
	}
	return out
}

// batchLook is what the cache holds for a batch: the buckets it can serve, and the
// locations to price again (in batch order) from their batch's first changed bucket.
type batchLook struct {
	batch     fleetBatch
	hits      []fleetSum
	missed    map[string]uint32 // location → its first changed bucket
	missedIDs []string
	from      time.Time
	under     pricedUnder
}

// fleetLooks reads the fingerprints of each zone's batches, fleetParallel zones at a time,
// and looks their buckets up. whole: the batches hold every location of the scope.
func (c *Pricer) fleetLooks(ctx context.Context, scope kwhouse.Scope, req FleetRequest, batches []fleetBatch,
	plans map[string]tariffs.Plan, epoch string, whole bool) ([]batchLook, error) {
	byZone := map[string][]int{}
	var zones []string
	for i, b := range batches {
		if _, ok := byZone[b.zone]; !ok {
			zones = append(zones, b.zone)
		}
		byZone[b.zone] = append(byZone[b.zone], i)
	}
	looks := make([]batchLook, len(batches))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	for _, zone := range zones {
		g.Go(func() error {
			idx := byZone[zone]
			zb := make([]fleetBatch, len(idx))
			for i, bi := range idx {
				zb[i] = batches[bi]
			}
			rows, pre, err := c.zonePrintsKept(gctx, scope, req, zone, zb, plans, whole && len(zones) == 1)
			if err != nil {
				return err
			}
			u := pricedUnder{epoch: epoch, zone: zone, plans: plans}
			for i, part := range splitRows(rows, zb) {
				looks[idx[i]] = c.look(scope, req, zb[i], batchPrints(part, zb[i].tiered, pre), u)
			}
			return nil
		})
	}
	return looks, g.Wait()
}

// splitRows parts a zone's cell rows by batch, keeping their order, and drops those of
// locations in none (a read of the whole scope meets deleted locations' records).
func splitRows(rows []cellRow, batches []fleetBatch) [][]cellRow {
	of := map[string]int{}
	for i, b := range batches {
		for _, id := range b.ids {
			of[id] = i
		}
	}
	out := make([][]cellRow, len(batches))
	for _, r := range rows {
		if i, ok := of[r.loc]; ok {
			out[i] = append(out[i], r)
		}
	}
	return out
}

// look finds a batch's cached buckets.
func (c *Pricer) look(scope kwhouse.Scope, req FleetRequest, b fleetBatch, prints []bucketPrint, u pricedUnder) batchLook {
	l := batchLook{batch: b, under: u}
	l.hits, l.missed = c.bucketHits(scope, req, b.tiered, prints, u)
	var from int64
	l.missedIDs, from = missedFrom(b.ids, l.missed, req.Start.Unix())
	l.from = time.Unix(from, 0).UTC()
	c.fleetCache.hits.Add(int64(len(l.hits)))
	return l
}

// settle caches what the jobs priced and adds the buckets served from the cache.
func (c *Pricer) settle(scope kwhouse.Scope, req FleetRequest, looks []batchLook, jobs []fleetJob, results [][]fleetSum) []fleetSum {
	priced := make([][]fleetSum, len(looks))
	for i, j := range jobs {
		priced[j.batch] = append(priced[j.batch], results[i]...)
	}
	n := 0
	for i, l := range looks {
		n += len(priced[i]) + len(l.hits)
	}
	out := make([]fleetSum, 0, n)
	for i, l := range looks {
		c.fleetCache.misses.Add(int64(len(priced[i])))
		c.keep(scope, req, l.batch.tiered, priced[i], l.under)
		for _, s := range mergeHits(priced[i], l.hits, l.missed, uint32(l.from.Unix())) {
			// A tiered bucket of the other direction's records only is no answer row.
			if !l.batch.tiered || s.NOut > 0 || !s.hashed {
				out = append(out, s)
			}
		}
	}
	return out
}

// missedFrom returns the missed locations in batch order and where pricing starts: the
// first changed bucket of any of them, not before w0.
func missedFrom(batch []string, missed map[string]uint32, w0 int64) ([]string, int64) {
	ids, first := make([]string, 0, len(missed)), int64(-1)
	for _, id := range batch {
		if k, ok := missed[id]; ok {
			ids = append(ids, id)
			if first < 0 || int64(k) < first {
				first = int64(k)
			}
		}
	}
	return ids, max(first, w0)
}
