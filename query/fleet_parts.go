package query

import (
	"context"
	"fmt"
	"hash/fnv"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

// The active parts of meter_records that may hold rows of [from, to). A part never changes
// once written, and every insert, merge or mutation adds a part of a new name: a
// fingerprint is the sum of its parts' sums, and a part's sums, once read, are kept.
var fleetPartsStmt = chstore.Register("query.fleet_parts", `SELECT name, toUInt32(modification_time), rows,
    toUInt32(min_time), toUInt32(max_time)
FROM system.parts
WHERE database = currentDatabase() AND table = 'meter_records' AND active
    AND max_time >= toDateTime(?) AND min_time < toDateTime(?)`)

// fleetPartsKept bounds the parts whose sums are kept, per zone read (a 1,000-location
// month in two parts is about 1.5 MB).
const fleetPartsKept = 512

// partKey names one part's sums for one zone read: main (the window) or lookback.
type partKey struct {
	read     uint64 // printsKeyOf
	lookback bool
	part     string // name, modification time and rows
}

func newKeptParts() *lru.Cache[partKey, []cellRow] {
	c, err := lru.New[partKey, []cellRow](fleetPartsKept)
	if err != nil {
		panic(err)
	}
	return c
}

// partLists are the parts a zone read needs: for the window (main) and before it (look).
type partLists struct {
	main, look []string
}

// part is a row of fleetPartsStmt.
type part struct {
	name     string
	mod      uint32
	rows     uint64
	min, max uint32
}

func (p part) id() string { return fmt.Sprintf("%s|%d|%d", p.name, p.mod, p.rows) }

// listParts returns the active parts that may hold rows of [from, to).
func (c *Pricer) listParts(ctx context.Context, from, to int64) ([]part, error) {
	rows, err := c.db.Query(ctx, fleetPartsStmt, uint32(max(from, 0)), uint32(to))
	if err != nil {
		return nil, fmt.Errorf("parts of the fleet's window: %w", err)
	}
	defer rows.Close()
	var out []part
	for rows.Next() {
		var p part
		if err := rows.Scan(&p.name, &p.mod, &p.rows, &p.min, &p.max); err != nil {
			return nil, fmt.Errorf("scan part: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// printsKeyOf names a zone's fingerprint read: the scope, request and batches it covers.
func printsKeyOf(scope kwhouse.Scope, req FleetRequest, zone string, batches []fleetBatch, plans map[string]tariffs.Plan, whole bool) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%t|%s|%d|%d|%s|%s|%s|%t", scope.AccountID, scope.LiveMode, zone, req.Start.Unix(), req.End.Unix(),
		req.Direction, req.Aggregation, req.GroupBy, whole)
	for _, b := range batches {
		for _, id := range b.ids {
			fmt.Fprintf(h, "|%s/%t/%d", id, b.tiered, plans[id].Lookback)
		}
	}
	return h.Sum64()
}

// zonePrintsKept is zonePrints reading only the parts it has not read for the same zone
// and request before (on a single server; a cluster's replicas' parts differ, and every
// request reads there): the parts are listed first, so a part written during the read is
// read by the next request. A past month's dashboard reads nothing; one whose month takes
// writes reads the new, small parts.
func (c *Pricer) zonePrintsKept(ctx context.Context, scope kwhouse.Scope, req FleetRequest, zone string, batches []fleetBatch,
	plans map[string]tariffs.Plan, whole bool) ([]cellRow, map[groupID]uint64, error) {
	if c.db.Cluster != "" {
		rows, before, err := c.zonePrints(ctx, scope, req, zone, batches, plans, whole, nil)
		return rows, preOf(before), err
	}
	w0, from := req.Start.Unix(), req.Start.Unix()
	for _, b := range batches {
		for _, id := range b.ids {
			if b.tiered {
				from = min(from, plans[id].Lookback)
			}
		}
	}
	parts, err := c.listParts(ctx, from, req.End.Unix())
	if err != nil {
		return nil, nil, err
	}
	read := printsKeyOf(scope, req, zone, batches, plans, whole)
	kept := c.fleetCache.parts
	var need partLists
	for _, p := range parts {
		if int64(p.max) >= w0 && !kept.Contains(partKey{read, false, p.id()}) {
			need.main = append(need.main, p.name)
		}
		if from < w0 && int64(p.min) < w0 && !kept.Contains(partKey{read, true, p.id()}) {
			need.look = append(need.look, p.name)
		}
	}
	if len(need.main)+len(need.look) > 0 {
		rows, before, err := c.zonePrints(ctx, scope, req, zone, batches, plans, whole, &need)
		if err != nil {
			return nil, nil, err
		}
		keepParts(kept, read, parts, need, rows, before)
	}
	if len(need.main)+len(need.look) == 0 {
		c.fleetCache.printsReused.Add(1)
	}
	if rows, pre, ok := sumParts(kept, read, parts, w0, from); ok {
		return rows, pre, nil
	}
	// A part's sums were evicted meanwhile (many fleets at once): read them all.
	rows, before, err := c.zonePrints(ctx, scope, req, zone, batches, plans, whole, nil)
	return rows, preOf(before), err
}

// keepParts keeps the sums of every part read (none for a part without rows of the read).
func keepParts(kept *lru.Cache[partKey, []cellRow], read uint64, parts []part, need partLists, rows, before []cellRow) {
	ids := map[string]string{}
	for _, p := range parts {
		ids[p.name] = p.id()
	}
	for _, set := range []struct {
		names    []string
		rows     []cellRow
		lookback bool
	}{{need.main, rows, false}, {need.look, before, true}} {
		by := make(map[string][]cellRow, len(set.names))
		for _, n := range set.names {
			by[n] = []cellRow{}
		}
		for _, r := range set.rows {
			by[r.part] = append(by[r.part], r)
		}
		for n, rs := range by {
			kept.Add(partKey{read, set.lookback, ids[n]}, rs)
		}
	}
}

// sumParts adds up the kept sums of the parts: the window's per bucket, the lookback's per
// location and device; false when a part's sums are no longer kept (evicted).
func sumParts(kept *lru.Cache[partKey, []cellRow], read uint64, parts []part, w0, from int64) ([]cellRow, map[groupID]uint64, bool) {
	type cell struct {
		loc, dev string
		k        uint32
		mine     uint8
	}
	sums := map[cell]uint64{}
	pre := map[groupID]uint64{}
	for _, p := range parts {
		if int64(p.max) >= w0 {
			rs, ok := kept.Get(partKey{read, false, p.id()})
			if !ok {
				return nil, nil, false
			}
			for _, r := range rs {
				sums[cell{r.loc, r.dev, r.k, r.mine}] += r.fp
			}
		}
		if from < w0 && int64(p.min) < w0 {
			rs, ok := kept.Get(partKey{read, true, p.id()})
			if !ok {
				return nil, nil, false
			}
			for _, r := range rs {
				pre[groupID{r.loc, r.dev}] += r.fp
			}
		}
	}
	rows := make([]cellRow, 0, len(sums))
	for k, fp := range sums {
		rows = append(rows, cellRow{loc: k.loc, dev: k.dev, k: k.k, mine: k.mine, fp: fp})
	}
	return rows, pre, true
}
