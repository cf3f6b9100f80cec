package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/kwhouse/kwhouse/bench/benchkit"
	"github.com/kwhouse/kwhouse/chstore"
)

// apiSide is (a): a `kwhouse serve` process and the shape's requests to it.
type apiSide struct {
	o      options
	s      shape
	db     *chstore.DB
	proc   *benchkit.Process
	put    func(i int) error
	bodies [][]byte
	rows   int
	ch     int
}

// apiBodies are the shape's requests: JSON arrays, or one NDJSON body.
func apiBodies(s shape, recs []record) [][]byte {
	if s.ndjson {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, r := range recs {
			_ = enc.Encode(r) // a record always encodes
		}
		return [][]byte{buf.Bytes()}
	}
	parts := chunks(len(recs), s.perRequest)
	bodies := make([][]byte, len(parts))
	for i, p := range parts {
		bodies[i], _ = json.Marshal(recs[p[0]:p[1]])
	}
	return bodies
}

func startAPI(o options, s shape, db *chstore.DB, key string, recs []record, ch int) (*apiSide, error) {
	proc, err := benchkit.StartProcess(o.bin, "127.0.0.1:"+strconv.Itoa(o.port), "KWHOUSE_CLICKHOUSE_ADDR="+o.chAddr, "KWHOUSE_CLICKHOUSE_CLUSTER="+o.cluster,
		"KWHOUSE_CLICKHOUSE_DATABASE="+o.database, "KWHOUSE_AUTH_JWT_SECRET=bench-bench-bench-bench-bench-bench-42",
		"KWHOUSE_LOG_LEVEL=warn", "KWHOUSE_HTTP_PPROF_ADDR="+pprofAddr(o))
	if err != nil {
		return nil, err
	}
	a := &apiSide{o: o, s: s, db: db, proc: proc, bodies: apiBodies(s, recs), rows: len(recs), ch: ch}
	base := proc.Base
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients}}
	a.put = func(i int) error {
		req, _ := http.NewRequest("PUT", base+"/meters/interval", bytes.NewReader(a.bodies[i]))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		if s.ndjson {
			req.Header.Set("Content-Type", "application/x-ndjson")
		}
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		var b struct {
			Accepted int `json:"records_accepted"`
		}
		if err := json.NewDecoder(res.Body).Decode(&b); err != nil || res.StatusCode != 200 || b.Accepted != min(s.perRequest, a.rows-i*s.perRequest) {
			return fmt.Errorf("PUT %d: status %d, accepted %d (%v)", i, res.StatusCode, b.Accepted, err)
		}
		return nil
	}
	return a, nil
}

func (a *apiSide) close() { a.proc.Stop() }

// round sends every request once (again: the same readings replace themselves).
func (a *apiSide) round(ctx context.Context, round int) (phase, error) {
	settle(ctx, a.db)
	var prof *profile
	if round == a.o.rounds-1 {
		prof = startProfile(a.o, a.s, a.rows)
	}
	cpu := startCPU(a.ch, a.proc.PID())
	d, err := parallel(a.s.clients, len(a.bodies), a.put)
	if err != nil {
		return phase{}, err
	}
	if prof != nil {
		if err := prof.stop(); err != nil {
			return phase{}, err
		}
	}
	us := cpu.perRow(a.rows)
	kw := cpu.since(1)
	p := phase{rate: float64(a.rows) / d.Seconds(), chCPU: us[0], kwCPU: us[1], rss: benchkit.ProcStatusKiB(a.proc.PID(), "VmHWM") << 10, kwFaults: kw.faults}
	if kw.user+kw.sys > 0 {
		p.kwSysShare = kw.sys / (kw.user + kw.sys)
	}
	fmt.Printf("  (a) round %d: %9.0f records/s, %.2f + %.2f µs CPU per row (ClickHouse + kwhouse), RSS %.0f MiB\n",
		round+1, p.rate, p.chCPU, p.kwCPU, float64(p.rss)/(1<<20))
	return p, nil
}
