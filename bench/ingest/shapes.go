package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// shape is one way a fleet sends its readings: how many, in what order, how many per
// request and over how many connections. (a), (b) and (c) send the same rows.
type shape struct {
	name       string
	about      string
	locations  int
	slots      int  // consecutive half-hours per location and day
	days       int  // day sets sent one after the other
	slotMajor  bool // a request holds many locations' same half-hour (a real-time push)
	perRequest int
	clients    int
	ndjson     bool // (a) streams one application/x-ndjson body
}

// shapes are the fleet shapes users send (docs/benchmarks.md, "Ingest").
var shapes = []shape{
	{name: "realtime", about: "10,000 locations × 1 half-hour per request (a half-hourly push), 4 clients",
		locations: 10000, slots: 50, days: 1, slotMajor: true, perRequest: 10000, clients: 4},
	{name: "daily", about: "200 locations × 50 consecutive half-hours per request (daily uploads), 4 clients",
		locations: 10000, slots: 50, days: 1, perRequest: 10000, clients: 4},
	{name: "fleet-daily", about: "10,000 locations × 48 half-hours × 10 days, 48 requests per day set, 4 clients",
		locations: 10000, slots: 48, days: 10, perRequest: 10000, clients: 4},
	{name: "small", about: "100 records per request (gateways), 16 clients",
		locations: 10000, slots: 50, days: 1, slotMajor: true, perRequest: 100, clients: 16},
	{name: "ndjson", about: "one NDJSON body of 5 M records (10,000 locations × 500 half-hours), 1 client",
		locations: 10000, slots: 500, days: 1, perRequest: 5_000_000, clients: 1, ndjson: true},
}

func pickShapes(names string) ([]shape, error) {
	if names == "" || names == "all" {
		return shapes, nil
	}
	var out []shape
	for _, n := range strings.Split(names, ",") {
		found := false
		for _, s := range shapes {
			if s.name == n {
				out, found = append(out, s), true
			}
		}
		if !found {
			return nil, fmt.Errorf("no shape %q", n)
		}
	}
	return out, nil
}

// records gives every location its readings in the order the shape sends them.
func (s shape) records(locs []string) []record {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]record, 0, len(locs)*s.slots*s.days)
	add := func(d, slot, i int) {
		st := t0.Add(time.Duration(d)*24*time.Hour + time.Duration(slot)*30*time.Minute)
		out = append(out, record{Location: locs[i], Ref: "r" + strconv.Itoa(len(out)), Units: "WH",
			Value: float64(100 + (i*7+slot*13+d)%900), Start: st.Format(time.RFC3339), End: st.Add(30 * time.Minute).Format(time.RFC3339)})
	}
	for d := 0; d < s.days; d++ {
		if s.slotMajor {
			for slot := 0; slot < s.slots; slot++ {
				for i := range locs {
					add(d, slot, i)
				}
			}
			continue
		}
		for i := range locs {
			for slot := 0; slot < s.slots; slot++ {
				add(d, slot, i)
			}
		}
	}
	return out
}
