package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/tariffs"
)

// fleetShape is one POST /costs/fleet request shape.
type fleetShape struct {
	name        string
	locations   int // the first n of the fixture; 0: all (no location_ids)
	aggregation string
	window      [2]string
	csv         bool
	// moving: request i ends i half-hours after window[1], so each one has a reading the
	// one before did not (a month-to-date dashboard refreshed as readings arrive).
	moving bool
	// elsewhere: before each request another account writes a reading into the window's
	// month, so the table's parts change but none of the fleet's rows do (live ingest).
	elsewhere bool
	// change, when set, happens before each request (changes below); "second process"
	// asks each request of a new kwhouse process on the same stores instead.
	change string
	// limit, when set, is the page size asked instead of 10,000; every page is fetched
	// (following next_cursor) and timed as one answer.
	limit int
	// charges asks include_charges (every tariff of the fixture has standing, demand and tax).
	charges bool
}

// What happens before each request of a shape with a change.
const (
	changeOnboard  = "onboard"        // a location and its tariff are created in the fleet's account (deleted after the request, untimed)
	changeTomorrow = "tomorrow"       // market prices are written for a day after the window
	changeCold     = "cold"           // no priced bucket is kept (priced_buckets emptied)
	changeSecond   = "second process" // the request is a new process's first
	// The request is the first of a new process that computes it: a restart onto another
	// build, whose answers the answer cache (keyed by build) holds none of; a second
	// process of the same build serves the first's from it.
	changeRelease = "new release"
)

// fleetShapes times POST /costs/fleet and, for each shape, the floor: a bare ClickHouse
// GROUP BY location and local bucket of the same rows, in the same run. Each shape is
// timed twice: priced afresh by a service without priced buckets (fresh), and by one
// with it (base), the same request repeated after the first filled it; a moving shape
// only by the latter, every request different.
func fleetShapes(ctx context.Context, a *app.App, base, fresh string, fx *fixture, o options) error {
	month, year := [2]string{"2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"}, [2]string{"2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"}
	today := [2]string{"2024-06-14T23:00:00Z", "2024-06-15T23:00:00Z"}  // 15 June, local (BST)
	toDate := [2]string{"2024-05-31T23:00:00Z", "2024-06-19T23:00:00Z"} // 1 June to 20 June, local, and on
	shapes := []fleetShape{
		{"fleet all, one local day (JSON)", 0, "DAY", today, false, false, false, "", 0, false},
		{"fleet 100, month by DAY (CSV)", 100, "DAY", month, true, false, false, "", 0, false},
		{"fleet all, month by DAY (CSV)", 0, "DAY", month, true, false, false, "", 0, false},
		{"fleet all, month by DAY, other accounts writing (CSV)", 0, "DAY", month, true, false, true, "", 0, false},
		{"fleet all, month to date by DAY, moving end (CSV)", 0, "DAY", toDate, true, true, false, "", 0, false},
		{"fleet all, month, one row each (JSON)", 0, "NONE", month, false, false, false, "", 0, false},
		{"fleet all, year by MONTH (CSV)", 0, "MONTH", year, true, false, false, "", 0, false},
		{"fleet all, month by DAY, after onboarding a location + tariff (CSV)", 0, "DAY", month, true, false, false, changeOnboard, 0, false},
		{"fleet all, month by DAY, after tomorrow's market prices (CSV)", 0, "DAY", month, true, false, false, changeTomorrow, 0, false},
		{"fleet all, month by DAY, a second process's first answer (CSV)", 0, "DAY", month, true, false, false, changeSecond, 0, false},
		{"fleet all, month by DAY, cold (CSV)", 0, "DAY", month, true, false, false, changeCold, 0, false},
		{"fleet all, month by DAY, every page of the default 1,000 (JSON)", 0, "DAY", month, false, false, false, "", 1000, false},
		{"fleet all, month by DAY, every page of 10,000 (JSON)", 0, "DAY", month, false, false, false, "", 10000, false},
		{"fleet all, month by DAY, include_charges (CSV)", 0, "DAY", month, true, false, false, "", 0, true},
		{"fleet all, year by MONTH, include_charges (CSV)", 0, "MONTH", year, true, false, false, "", 0, true},
		{"fleet all, year by MONTH, live (CSV)", 0, "MONTH", year, true, false, false, changeLive, 0, false},
		{"fleet all, year by MONTH, live, include_charges (CSV)", 0, "MONTH", year, true, false, false, changeLive, 0, true},
		{"fleet all, month by DAY, a second process's first answer, include_charges (CSV)", 0, "DAY", month, true, false, false, changeSecond, 0, true},
		{"fleet all, year by MONTH, a second process's first answer (CSV)", 0, "MONTH", year, true, false, false, changeSecond, 0, false},
		{"fleet all, year by MONTH, a second process's first answer, include_charges (CSV)", 0, "MONTH", year, true, false, false, changeSecond, 0, true},
		{"fleet all, month by DAY, a new release's first answer (CSV)", 0, "DAY", month, true, false, false, changeRelease, 0, false},
		{"fleet all, month by DAY, a new release's first answer, include_charges (CSV)", 0, "DAY", month, true, false, false, changeRelease, 0, true},
		{"fleet all, year by MONTH, a new release's first answer (CSV)", 0, "MONTH", year, true, false, false, changeRelease, 0, false},
		{"fleet all, year by MONTH, a new release's first answer, include_charges (CSV)", 0, "MONTH", year, true, false, false, changeRelease, 0, true},
	}
	n := max(10, o.requests/10)
	for _, s := range shapes {
		if !o.selected(s.name) {
			continue
		}
		flat, err := fleetFloor(ctx, a, fx, s, n)
		if err != nil {
			return err
		}
		if !s.moving && !s.elsewhere && s.change == "" && o.afresh {
			if err := timeFleet(ctx, a, fresh, fx, s, n, s.name+", afresh", flat, o.fleetTimeout); err != nil {
				return err
			}
		}
		if err := timeFleet(ctx, a, base, fx, s, n, s.name+", cached", flat, o.fleetTimeout); err != nil {
			return err
		}
	}
	return nil
}

// timeFleet times n requests of shape s at base and reports them against the floor.
func timeFleet(ctx context.Context, a *app.App, base string, fx *fixture, s fleetShape, n int, name string, flat []time.Duration,
	timeout time.Duration) error {
	var before, after func(i int) error
	if s.elsewhere {
		before = func(i int) error { return writeElsewhere(ctx, a, s.window[0], i) }
	}
	if s.change != "" {
		before = func(i int) error { return changeBefore(ctx, a, fx, s.change, i) }
	}
	if s.change == changeOnboard {
		// Each request's location goes after it, so the fixture does not grow run after run.
		var onboarded string
		before = func(int) (err error) { onboarded, err = onboard(ctx, a, fx); return err }
		after = func(int) error { return offboard(ctx, a, fx, onboarded) }
	}
	if s.change == changeSecond || s.change == changeRelease {
		var stop func()
		before = func(int) error {
			if stop != nil {
				stop()
			}
			var err error
			base, stop, err = newProcess(ctx, a, s.change == changeRelease)
			return err
		}
		defer func() {
			if stop != nil {
				stop()
			}
		}()
	}
	answers, rows, err := measureFleet(func() string { return base }, fx, s, n, before, after, timeout)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	mem, err := answerMemory(ctx, a.Config.ClickHouse.Addr, fx.scope.AccountID, answers)
	if err != nil {
		return err
	}
	var lat []time.Duration
	for _, an := range answers {
		lat = append(lat, an.t1.Sub(an.t0))
	}
	report(name, lat, fmt.Sprintf("  %d rows; floor p50 %.1f ms p99 %.1f ms (p50 ratio %.1f×, p99 ratio %.1f×); per answer: %s",
		rows, ms(pct(flat, 50)), ms(pct(flat, 99)),
		float64(pct(lat, 50))/float64(pct(flat, 50)), float64(pct(lat, 99))/float64(pct(flat, 99)), mem))
	reportReceived(name, answers, flat)
	return nil
}

// reportReceived reports a JSON shape's answers again without the client's decoding: the
// time to each page's last byte (gzip inflated, as the client's transport reads it) and
// the next request, against the same floor, whose rows the floor's client counts without
// decoding them either; and the decoding alone.
func reportReceived(name string, answers []answer, flat []time.Duration) {
	var received, decode []time.Duration
	for _, an := range answers {
		received, decode = append(received, an.t1.Sub(an.t0)-an.decode), append(decode, an.decode)
	}
	if pct(decode, 50) == 0 {
		return
	}
	report(name+", to the last byte", received, fmt.Sprintf("  (p50 ratio %.1f×, p99 ratio %.1f×); the client's JSON decoding p50 %.1f ms",
		float64(pct(received, 50))/float64(pct(flat, 50)), float64(pct(received, 99))/float64(pct(flat, 99)), ms(pct(decode, 50))))
}

func (s fleetShape) body(fx *fixture, i int) []byte {
	end := s.window[1]
	if s.moving {
		t, _ := time.Parse(time.RFC3339, end)
		end = t.Add(time.Duration(i) * 30 * time.Minute).Format(time.RFC3339)
	}
	limit := 10000
	if s.limit > 0 {
		limit = s.limit
	}
	b := map[string]any{"start_time": s.window[0], "end_time": end, "aggregation": s.aggregation, "limit": limit}
	if s.locations > 0 {
		b["location_ids"] = fx.locations[:s.locations]
	}
	if s.charges {
		b["include_charges"] = true
	}
	out, _ := json.Marshal(b)
	return out
}

// measureFleet asks n+2 requests of shape s and returns the last n (the first warm caches
// and expand the rate periods), each on seconds of its own (timeAnswer); before and after
// (either may be nil) run around each request, untimed.
func measureFleet(base func() string, fx *fixture, s fleetShape, n int, before, after func(i int) error,
	fleetTimeout time.Duration) ([]answer, int, error) {
	client := &http.Client{Timeout: fleetTimeout}
	var answers []answer
	rows := 0
	for i := 0; i < n+2; i++ {
		if before != nil {
			if err := before(i); err != nil {
				return nil, 0, err
			}
		}
		var decode time.Duration
		an, err := timeAnswer(func() (err error) { rows, decode, err = askFleet(client, base(), fx, s, i); return err })
		an.decode = decode
		if err != nil {
			return nil, 0, err
		}
		if after != nil {
			if err := after(i); err != nil {
				return nil, 0, err
			}
		}
		if i >= 2 {
			answers = append(answers, an)
		}
	}
	return answers, rows, nil
}

// askFleet asks request i of shape s and returns its rows: every page's, following
// next_cursor, when the shape pages, and the time spent decoding JSON pages once read.
func askFleet(client *http.Client, base string, fx *fixture, s fleetShape, i int) (int, time.Duration, error) {
	rows := 0
	cursor := ""
	var decode time.Duration
	for {
		body := s.body(fx, i)
		if cursor != "" {
			var b map[string]any
			_ = json.Unmarshal(body, &b)
			b["starting_after"] = cursor
			body, _ = json.Marshal(b)
		}
		req, _ := http.NewRequest("POST", base+"/costs/fleet", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fx.key)
		if s.csv {
			req.Header.Set("Accept", "text/csv")
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			return 0, 0, fmt.Errorf("status %d: %.300s (%v)", res.StatusCode, out, err)
		}
		if s.csv {
			return strings.Count(string(out), "\n") - 1, 0, nil
		}
		var page struct {
			Data       []json.RawMessage
			NextCursor *string `json:"next_cursor"`
		}
		t0 := time.Now()
		if err := json.Unmarshal(out, &page); err != nil {
			return 0, 0, err
		}
		decode += time.Since(t0)
		rows += len(page.Data)
		if s.limit == 0 || page.NextCursor == nil {
			return rows, decode, nil
		}
		cursor = *page.NextCursor
	}
}

// writeElsewhere stores reading i of a location of another account in the month that
// from starts: a new part in the fleet's partition, and no row of the fleet.
func writeElsewhere(ctx context.Context, a *app.App, from string, i int) error {
	t, _ := time.Parse(time.RFC3339, from)
	t = t.Add(time.Duration(i) * 30 * time.Minute)
	elsewhere := kwhouse.Scope{AccountID: "acc_kwbench_elsewhere"}
	return marked(ctx, a, elsewhere, func() error {
		return a.DB.Exec(ctx, chstore.Tool(`INSERT INTO meter_records (account_id, live_mode, location_id, device_id, direction,
		tariff_rate, start_time, end_time, energy_wh, confidence, session_reference_id, record_reference_id, batch_id, version)
		SELECT 'acc_kwbench_elsewhere', 0, 'loc_kwbench_elsewhere', '', 'IMPORT', 'IMPORT', toDateTime(?), toDateTime(?),
			1., 1., '', '', '', toUInt64(?)`),
			uint32(t.Unix()), uint32(t.Unix()+1800), uint64(time.Now().UnixNano()))
	})
}

// fleetFloor times the bare sum of the same rows by location and local bucket.
func fleetFloor(ctx context.Context, a *app.App, fx *fixture, s fleetShape, n int) ([]time.Duration, error) {
	bucket := map[string]string{"DAY": "toStartOfDay(start_time, 'Europe/London')",
		"MONTH": "toStartOfMonth(start_time, 'Europe/London')", "NONE": "0"}[s.aggregation]
	where := ""
	if s.locations > 0 {
		where = " AND location_id IN ('" + strings.Join(fx.locations[:s.locations], "','") + "')"
	}
	from, _ := time.Parse(time.RFC3339, s.window[0])
	to, _ := time.Parse(time.RFC3339, s.window[1])
	q := `SELECT location_id, ` + bucket + ` AS b, sum(energy_wh) FROM meter_records
		WHERE account_id = ? AND live_mode = 0 AND device_id = '' AND start_time >= toDateTime(?) AND start_time < toDateTime(?)` + where + `
		GROUP BY location_id, b`
	var lat []time.Duration
	for i := 0; i < n+2; i++ {
		t0 := time.Now()
		rows, err := a.DB.Query(ctx, chstore.Tool(q), fx.scope.AccountID, uint32(from.Unix()), uint32(to.Unix()))
		if err != nil {
			return nil, err
		}
		for rows.Next() {
		}
		rows.Close()
		if i >= 2 {
			lat = append(lat, time.Since(t0))
		}
	}
	return lat, nil
}

// changeBefore makes change i of a shape, before its request.
func changeBefore(ctx context.Context, a *app.App, fx *fixture, change string, i int) error {
	switch change {
	case changeTomorrow:
		t := time.Date(2025, 1, 20, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 30 * time.Minute)
		p := 0.1
		_, err := a.Tariffs.PutPrices(ctx, fx.scope, fx.market, []tariffs.MarketPrice{{StartTime: catalog.Timestamp(t),
			EndTime: catalog.Timestamp(t.Add(30 * time.Minute)), Price: &p}})
		return err
	case changeCold:
		return emptyBuckets(ctx, a, fx)
	case changeLive:
		return liveBefore(ctx, a, fx, i)
	}
	return nil
}

// newProcess starts another kwhouse service on the same stores (its first request is
// timed as a second process's, or a restarted one's, first answer); computed: without the
// answer cache, as a new build finds none of its answers there.
func newProcess(ctx context.Context, a *app.App, computed bool) (string, func(), error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := a.Config
	if computed {
		c := *cfg
		c.Costs.AnswerCache = "off"
		cfg = &c
	}
	b, err := app.New(ctx, cfg, logger, app.Options{RedisPrefix: "kwbench:"})
	if err != nil {
		return "", nil, err
	}
	base, stop, err := benchkit.Serve(ctx, b)
	if err != nil {
		b.Close()
		return "", nil, err
	}
	return base, func() { stop(); b.Close() }, nil
}
