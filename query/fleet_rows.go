package query

import (
	"math"
	"sort"
	"time"

	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/tariffs"
)

// fleetRows turns the priced sums into the answer's rows and lists the objects that
// cannot be priced (as POST /costs/interval would refuse them), in id order.
func fleetRows(req FleetRequest, sums []fleetSum, locs map[string]catalog.Location,
	plans map[string]tariffs.Plan) ([]FleetRow, []SkippedItem) {
	objectOf := func(s *fleetSum) string {
		if req.GroupBy == GroupDevice {
			return s.Dev
		}
		return s.Loc
	}
	type pair struct{ object, location string }
	refused := map[string]string{} // object → code
	where := map[string]string{}   // device → its location in the window
	counts := map[pair][2]uint64{} // import and export records
	// Sums come in runs of one object (by location, device, bucket): a run's records are
	// counted, and its location checked, once.
	for i := 0; i < len(sums); {
		obj, loc := objectOf(&sums[i]), sums[i].Loc
		var n [2]uint64
		for ; i < len(sums) && sums[i].Loc == loc && objectOf(&sums[i]) == obj; i++ {
			n[0], n[1] = n[0]+sums[i].NImport, n[1]+sums[i].NExport
		}
		had := counts[pair{obj, loc}]
		counts[pair{obj, loc}] = [2]uint64{had[0] + n[0], had[1] + n[1]}
		if l, ok := where[obj]; ok && l != loc {
			refused[obj] = "ambiguous_location"
		}
		where[obj] = loc
	}
	for k, n := range counts {
		if refused[k.object] == "" && plans[k.location].Missing(n[0], n[1]) != "" {
			refused[k.object] = "no_tariff_connected"
		}
	}
	// Each row is written in place, by a run of one location: rows built by value, each
	// copying the request, its sum and its location into and out of a call, took twice
	// the time (BenchmarkFleetRows).
	rows := make([]FleetRow, len(sums))
	n := 0
	when := &bucketDates{req: req}
	for i := 0; i < len(sums); {
		id := sums[i].Loc
		l := locs[id]
		for ; i < len(sums) && sums[i].Loc == id; i++ {
			s := &sums[i]
			obj := objectOf(s)
			if len(refused) > 0 && refused[obj] != "" {
				continue
			}
			fillFleetRow(&rows[n], req.GroupBy, s, obj, l.CurrencyCode, when.of(s.Key, l.Timezone))
			n++
		}
	}
	rows = rows[:n]
	if req.GroupBy == GroupCustomer {
		rows, refused = byCustomer(rows, locs, refused)
	}
	return rows, skippedList(refused)
}

// fillFleetRow makes r the row of sum s of group object obj (of a group_by), in currency
// and bucket w.
func fillFleetRow(r *FleetRow, groupBy string, s *fleetSum, obj, currency string, w *bucketWhen) {
	r.Object, r.CurrencyCode, r.Energy = "fleet_cost_row", currency, energyOf(s.Energy)
	r.Tariff = TariffValue{Value: Amount(s.Money), Confidence: Amount(s.Confidence)}
	r.wh, r.money = s.Energy, s.Money
	if groupBy == GroupDevice {
		r.DeviceID = obj
	} else {
		r.LocationID = obj
	}
	r.Date, r.StartTime, r.EndTime = w.date, &w.start, &w.end
	r.key = fleetKey{group: obj, date: r.Date, currency: currency}
}

// bucketWhen is a bucket's date and bounds as an answer row shows them.
type bucketWhen struct {
	date       string
	start, end catalog.Timestamp
}

// bucketDates dates the buckets of one answer, each (bucket, zone) once: rows share
// their dates and bounds (a month by DAY of 1,000 locations in one zone has 31). Buckets
// are kept per zone by their local start, the zone of the row before at hand: rows come
// by location, so a zone's name is hashed once a run of rows, not once a row.
type bucketDates struct {
	req    FleetRequest
	zones  map[string]map[uint32]*bucketWhen
	zone   string
	inZone map[uint32]*bucketWhen
}

func (d *bucketDates) of(k uint32, zone string) *bucketWhen {
	if d.inZone == nil || zone != d.zone {
		if d.zones == nil {
			d.zones = map[string]map[uint32]*bucketWhen{}
		}
		if d.zones[zone] == nil {
			d.zones[zone] = map[uint32]*bucketWhen{}
		}
		d.zone, d.inZone = zone, d.zones[zone]
	}
	w, ok := d.inZone[k]
	if !ok {
		w = bucketTimes(d.req, k, zone)
		d.inZone[k] = w
	}
	return w
}

// bucketTimes dates bucket k (its local start) of a location in zone: a local day or
// month, or the request's window when not aggregated.
func bucketTimes(req FleetRequest, k uint32, zone string) *bucketWhen {
	start, end := req.Start, req.End
	w := &bucketWhen{}
	if req.Aggregation != FleetAggregationNone {
		z, err := catalog.LoadZone(zone)
		if err != nil {
			z = time.UTC // a stored location's zone always loads
		}
		t := time.Unix(int64(k), 0).In(z)
		start = t
		if req.Aggregation == AggregationDay {
			w.date, end = t.Format("2006-01-02"), time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, z)
		} else {
			w.date, end = t.Format("2006-01"), time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, z)
		}
	}
	w.start, w.end = catalog.Timestamp(start.UTC()), catalog.Timestamp(end.UTC())
	return w
}

// byCustomer sums location rows into their customers' rows with the same date and
// currency; a customer with a location that cannot be priced is refused as a whole.
func byCustomer(rows []FleetRow, locs map[string]catalog.Location, refused map[string]string) ([]FleetRow, map[string]string) {
	customers := map[string]string{}
	for loc, code := range refused {
		if cu := locs[loc].CustomerID; cu != "" {
			customers[cu] = code
		}
	}
	refused = customers
	idx := map[fleetKey]int{}
	var out []FleetRow
	for _, r := range rows {
		cu := locs[r.LocationID].CustomerID
		if refused[cu] != "" {
			continue
		}
		k := fleetKey{group: cu, date: r.Date, currency: r.CurrencyCode}
		i, ok := idx[k]
		if !ok {
			idx[k], i = len(out), len(out)
			out = append(out, FleetRow{Object: r.Object, CustomerID: cu, Date: r.Date, CurrencyCode: r.CurrencyCode,
				Tariff: TariffValue{Confidence: 1}, key: k})
		}
		c := &out[i]
		c.wh, c.money = c.wh+r.wh, c.money+r.money
		c.Energy, c.Tariff.Value = energyOf(c.wh), Amount(c.money)
		c.Tariff.Confidence = Amount(math.Min(float64(c.Tariff.Confidence), float64(r.Tariff.Confidence)))
	}
	return out, refused
}

// skippedList lists refused objects in id order.
func skippedList(refused map[string]string) []SkippedItem {
	out := make([]SkippedItem, 0, len(refused))
	for id, code := range refused {
		out = append(out, SkippedItem{ID: id, Code: code})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
