package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// jsonSide is (b): the same records in the same requests, shaped as rows of a copy of
// meter_records, to ClickHouse's HTTP interface on keep-alive connections, as a Go client
// of ClickHouse would send them.
type jsonSide struct {
	s      shape
	db     *chstore.DB
	bodies [][]byte
	post   func(i int) error
	rows   int
	ch     int
}

func newJSONSide(ctx context.Context, o options, s shape, db *chstore.DB, scope kwhouse.Scope, recs []record, ch int) (*jsonSide, error) {
	if err := db.Exec(ctx, chstore.Tool("CREATE TABLE bench_json AS meter_records")); err != nil {
		return nil, err
	}
	j := &jsonSide{s: s, db: db, rows: len(recs), ch: ch}
	for _, p := range chunks(len(recs), s.perRequest) {
		var buf bytes.Buffer
		for k, r := range recs[p[0]:p[1]] {
			st, _ := time.Parse(time.RFC3339, r.Start)
			en, _ := time.Parse(time.RFC3339, r.End)
			row := map[string]any{"account_id": scope.AccountID, "live_mode": 0, "location_id": r.Location, "device_id": "",
				"direction": "IMPORT", "tariff_rate": "IMPORT", "start_time": st.Format(time.DateTime), "end_time": en.Format(time.DateTime),
				"energy_wh": r.Value, "confidence": 1, "session_reference_id": "", "record_reference_id": r.Ref,
				"batch_id": "bat_0", "version": p[0] + k}
			line, _ := json.Marshal(row)
			buf.Write(append(line, '\n'))
		}
		j.bodies = append(j.bodies, buf.Bytes())
	}
	url := o.chHTTP + "/?database=" + o.database + "&query=" + strings.ReplaceAll("INSERT INTO bench_json FORMAT JSONEachRow", " ", "%20")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients}}
	j.post = func(i int) error {
		res, err := client.Post(url, "application/x-ndjson", bytes.NewReader(j.bodies[i]))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			msg, _ := io.ReadAll(res.Body)
			return fmt.Errorf("ClickHouse: %d %s", res.StatusCode, msg)
		}
		return nil
	}
	return j, nil
}

func (j *jsonSide) round(ctx context.Context, round int) (phase, error) {
	if err := j.db.Exec(ctx, chstore.Tool("TRUNCATE TABLE bench_json")); err != nil {
		return phase{}, err
	}
	settle(ctx, j.db)
	cpu := startCPU(j.ch)
	d, err := parallel(j.s.clients, len(j.bodies), j.post)
	if err != nil {
		return phase{}, err
	}
	if n, err := count(ctx, j.db, "bench_json"); err != nil || n != uint64(j.rows) {
		return phase{}, fmt.Errorf("JSONEachRow stored %d of %d (%v)", n, j.rows, err)
	}
	p := phase{rate: float64(j.rows) / d.Seconds(), chCPU: cpu.perRow(j.rows)[0]}
	fmt.Printf("  (b) round %d: %9.0f rows/s, %.2f µs ClickHouse CPU per row\n", round+1, p.rate, p.chCPU)
	return p, nil
}

// nativeSide is (c): bench_json exported in Native format, one file per client, inserted
// with clickhouse-client — ClickHouse's ceiling for these rows.
type nativeSide struct {
	o     options
	s     shape
	db    *chstore.DB
	dir   string
	files []string
	ch    int
}

func newNativeSide(ctx context.Context, o options, s shape, db *chstore.DB, ch int) (*nativeSide, error) {
	if err := db.Exec(ctx, chstore.Tool("CREATE TABLE bench_native AS meter_records")); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kwbench")
	if err != nil {
		return nil, err
	}
	n := &nativeSide{o: o, s: s, db: db, dir: dir, files: make([]string, s.clients), ch: ch}
	host, port, _ := strings.Cut(o.chAddr, ":")
	for i := range n.files {
		n.files[i] = filepath.Join(dir, fmt.Sprintf("part%d.native", i))
		q := fmt.Sprintf("SELECT * FROM %s.bench_json WHERE cityHash64(record_reference_id) %% %d = %d FORMAT Native", o.database, s.clients, i)
		out, err := os.Create(n.files[i])
		if err != nil {
			n.close()
			return nil, err
		}
		cmd := exec.Command("clickhouse-client", "--host", host, "--port", port, "--query", q)
		cmd.Stdout = out
		err = cmd.Run()
		out.Close()
		if err != nil {
			n.close()
			return nil, fmt.Errorf("export native: %w", err)
		}
	}
	return n, nil
}

func (n *nativeSide) close() { os.RemoveAll(n.dir) }

func (n *nativeSide) insert(i int) error {
	in, err := os.Open(n.files[i])
	if err != nil {
		return err
	}
	defer in.Close()
	host, port, _ := strings.Cut(n.o.chAddr, ":")
	cmd := exec.Command("clickhouse-client", "--host", host, "--port", port, "--database", n.o.database,
		"--query", "INSERT INTO bench_native FORMAT Native")
	cmd.Stdin = in
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("clickhouse-client: %v: %s", err, out)
	}
	return nil
}

func (n *nativeSide) round(ctx context.Context, round int) (phase, error) {
	if err := n.db.Exec(ctx, chstore.Tool("TRUNCATE TABLE bench_native")); err != nil {
		return phase{}, err
	}
	settle(ctx, n.db)
	cpu := startCPU(n.ch)
	d, err := parallel(n.s.clients, len(n.files), n.insert)
	if err != nil {
		return phase{}, err
	}
	rows, err := count(ctx, n.db, "bench_native")
	if err != nil {
		return phase{}, err
	}
	p := phase{rate: float64(rows) / d.Seconds(), chCPU: cpu.perRow(int(rows))[0]}
	fmt.Printf("  (c) round %d: %9.0f rows/s, %.2f µs ClickHouse CPU per row\n", round+1, p.rate, p.chCPU)
	return p, nil
}
