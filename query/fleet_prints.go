package query

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

var fleetCellsStmt = chstore.Register("query.fleet_cells", "fleet_cells.sql: fingerprints of the rows of a fleet's buckets")

// lookbackBucket is the bucket fleet_cells.sql puts a tiered location's lookback rows in.
const lookbackBucket = math.MaxUint32

// cellsShape picks the parts of fleet_cells.sql a query needs.
type cellsShape struct {
	Aggregation     string
	Devices, Tiered bool
}

// bucketPrint is a row of fleet_cells.sql, with a tiered bucket's chain fingerprint.
type bucketPrint struct {
	loc, dev  string
	k         uint32
	fp, chain uint64
}

// fleetPrints reads the fingerprints of the buckets of batches of one zone and kind
// (tiered or not) in one read of the records, in location, device and bucket order.
// (Per batch, a subset's read met the others' granules; both kinds in one read, ORed,
// read the month of 1,000 locations in 200 ms against 88 and 78 ms apart.)
func (c *Pricer) fleetPrints(ctx context.Context, scope kwhouse.Scope, req FleetRequest, zone string, batches []fleetBatch,
	plans map[string]tariffs.Plan) ([]bucketPrint, error) {
	tiered := batches[0].tiered
	shape := cellsShape{Aggregation: req.Aggregation, Devices: req.GroupBy == GroupDevice, Tiered: tiered}
	var ids []string
	var lookbacks []uint32
	lookback := req.Start.Unix()
	for _, b := range batches {
		ids = append(ids, b.ids...)
		for _, id := range b.ids {
			if tiered {
				lookbacks, lookback = append(lookbacks, uint32(plans[id].Lookback)), min(lookback, plans[id].Lookback)
			}
		}
	}
	args := []any{chstore.Named("account", scope.AccountID), chstore.Named("live", scope.LiveByte()),
		chstore.Named("locs", chstore.Set(ids)), chstore.Named("dir", req.Direction), chstore.Named("tz", zone),
		chstore.Named("w0", uint32(req.Start.Unix())), chstore.Named("w1", uint32(req.End.Unix())),
		chstore.Named("lookback", uint32(lookback)), chstore.Named("act_loc", ids), chstore.Named("lookbacks", lookbacks)}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "fleet_cells", shape); err != nil {
		return nil, fmt.Errorf("render fleet cells query: %w", err)
	}
	rows, err := c.db.Query(ctx, fleetCellsStmt.With(buf.String()), args...)
	if err != nil {
		return nil, fmt.Errorf("fleet cells query: %w", err)
	}
	defer rows.Close()
	var out []bucketPrint
	for rows.Next() {
		var p bucketPrint
		if err := rows.Scan(&p.loc, &p.dev, &p.k, &p.fp); err != nil {
			return nil, fmt.Errorf("scan fleet cell: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// chainPrints gives each tiered bucket its chain: the lookback's fingerprint (the last
// bucket of its location and device, then dropped) plus those of its buckets up to it.
func chainPrints(prints []bucketPrint) []bucketPrint {
	out := prints[:0]
	for i := 0; i < len(prints); {
		j := i
		for j < len(prints) && prints[j].loc == prints[i].loc && prints[j].dev == prints[i].dev {
			j++
		}
		var chain uint64
		if prints[j-1].k == lookbackBucket {
			chain = prints[j-1].fp
		}
		for _, p := range prints[i:j] {
			if p.k != lookbackBucket {
				chain += p.fp
				p.chain = chain
				out = append(out, p)
			}
		}
		i = j
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

// fleetLooks reads the fingerprints of the batches of each zone and kind, fleetParallel
// reads at a time, and looks their buckets up.
func (c *Pricer) fleetLooks(ctx context.Context, scope kwhouse.Scope, req FleetRequest, batches []fleetBatch,
	plans map[string]tariffs.Plan, epoch string) ([]batchLook, error) {
	type kind struct {
		zone   string
		tiered bool
	}
	byKind := map[kind][]int{}
	var kinds []kind
	for i, b := range batches {
		k := kind{b.zone, b.tiered}
		if _, ok := byKind[k]; !ok {
			kinds = append(kinds, k)
		}
		byKind[k] = append(byKind[k], i)
	}
	looks := make([]batchLook, len(batches))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fleetParallel)
	for _, k := range kinds {
		zone := k.zone
		g.Go(func() error {
			idx := byKind[k]
			zb := make([]fleetBatch, len(idx))
			for i, bi := range idx {
				zb[i] = batches[bi]
			}
			prints, err := c.fleetPrints(gctx, scope, req, zone, zb, plans)
			if err != nil {
				return err
			}
			for i, part := range splitPrints(prints, zb) {
				looks[idx[i]] = c.look(scope, req, zb[i], part, pricedUnder{epoch: epoch, zone: zone, plans: plans})
			}
			return nil
		})
	}
	return looks, g.Wait()
}

// splitPrints parts a zone's prints by batch, keeping their order.
func splitPrints(prints []bucketPrint, batches []fleetBatch) [][]bucketPrint {
	of := map[string]int{}
	for i, b := range batches {
		for _, id := range b.ids {
			of[id] = i
		}
	}
	out := make([][]bucketPrint, len(batches))
	for _, p := range prints {
		out[of[p.loc]] = append(out[of[p.loc]], p)
	}
	return out
}

// look finds a batch's cached buckets.
func (c *Pricer) look(scope kwhouse.Scope, req FleetRequest, b fleetBatch, prints []bucketPrint, u pricedUnder) batchLook {
	if b.tiered {
		prints = chainPrints(prints)
	}
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
