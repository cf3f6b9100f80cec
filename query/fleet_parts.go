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

// The active parts of meter_records that may hold rows of [from, to): parts never change
// once written, and every insert, merge or mutation adds a part of a new name, so the same
// list means the same rows.
var fleetPartsStmt = chstore.Register("query.fleet_parts", `SELECT name, toUInt32(modification_time), rows
FROM system.parts
WHERE database = currentDatabase() AND table = 'meter_records' AND active
    AND max_time >= toDateTime(?) AND min_time < toDateTime(?)
ORDER BY name`)

// fleetPrintsKept bounds the zones' fingerprint reads kept for reuse (a 1,000-location
// month by DAY is about 1.5 MB).
const fleetPrintsKept = 32

// keptPrints is a zone's fingerprint read, and the parts it was read from.
type keptPrints struct {
	parts string
	rows  []cellRow // never changed once kept
	pre   map[groupID]uint64
}

func newKeptPrints() *lru.Cache[uint64, keptPrints] {
	c, err := lru.New[uint64, keptPrints](fleetPrintsKept)
	if err != nil {
		panic(err)
	}
	return c
}

// partsPrint names the active parts that may hold rows of [from, to); ok is false on a
// cluster, whose replicas' parts differ (every request reads fingerprints there).
func (c *Pricer) partsPrint(ctx context.Context, from, to int64) (string, bool, error) {
	if c.db.Cluster != "" {
		return "", false, nil
	}
	rows, err := c.db.Query(ctx, fleetPartsStmt, uint32(max(from, 0)), uint32(to))
	if err != nil {
		return "", false, fmt.Errorf("parts of the fleet's window: %w", err)
	}
	defer rows.Close()
	h := fnv.New64a()
	for rows.Next() {
		var name string
		var mod uint32
		var n uint64
		if err := rows.Scan(&name, &mod, &n); err != nil {
			return "", false, fmt.Errorf("scan part: %w", err)
		}
		fmt.Fprintf(h, "%s|%d|%d;", name, mod, n)
	}
	return fmt.Sprintf("%x", h.Sum64()), true, rows.Err()
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

// zonePrintsKept is zonePrints, reusing the last read of the same zone and request while
// the parts it was read from are all the parts there are (a past month, say): the parts
// are read first, so a write during the fingerprint read changes them for the next request.
func (c *Pricer) zonePrintsKept(ctx context.Context, scope kwhouse.Scope, req FleetRequest, zone string, batches []fleetBatch,
	plans map[string]tariffs.Plan, whole bool) ([]cellRow, map[groupID]uint64, error) {
	from := req.Start.Unix()
	for _, b := range batches {
		for _, id := range b.ids {
			if b.tiered {
				from = min(from, plans[id].Lookback)
			}
		}
	}
	parts, ok, err := c.partsPrint(ctx, from, req.End.Unix())
	if err != nil {
		return nil, nil, err
	}
	key := printsKeyOf(scope, req, zone, batches, plans, whole)
	if ok {
		if k, found := c.fleetCache.prints.Get(key); found && k.parts == parts {
			c.fleetCache.printsReused.Add(1)
			return k.rows, k.pre, nil
		}
	}
	rows, pre, err := c.zonePrints(ctx, scope, req, zone, batches, plans, whole)
	if err == nil && ok {
		c.fleetCache.prints.Add(key, keptPrints{parts: parts, rows: rows, pre: pre})
	}
	return rows, pre, err
}
