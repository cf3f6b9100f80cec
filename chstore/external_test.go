package chstore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/config"
)

var externalSegs = External{Name: "_t", Columns: []ExternalColumn{
	{"k", "UInt8", []uint8{1, 2}}, {"s", "UInt32", []uint32{10, 20}},
	{"p", "Array(Float64)", [][]float64{{0.5, 1.25}, {}}}, {"loc", "String", []string{"a", "b'c"}}}}

// A query reads an external table sent with it as a table.
func TestExternalTableIsReadAsATable(t *testing.T) {
	addr := os.Getenv("KWHOUSE_TEST_CLICKHOUSE_ADDR")
	if addr == "" || strings.Contains(addr, ",") {
		t.Skip("KWHOUSE_TEST_CLICKHOUSE_ADDR (one server) not set")
	}
	cfg := config.ClickHouse{Addr: addr, Database: "default", DialTimeout: 5 * time.Second, MaxOpenConns: 2,
		MaxExecutionTime: 30 * time.Second, MaxMemoryUsage: 1 << 30}
	db, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := WithExternal(context.Background(), externalSegs)
	var n, s uint64
	var p float64
	var locs string
	err = db.QueryRow(ctx, Tool("SELECT count(), sum(s), sum(arraySum(p)), arrayStringConcat(groupArray(loc), '|') FROM (SELECT * FROM _t ORDER BY k)")).
		Scan(&n, &s, &p, &locs)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || s != 30 || p != 1.75 || locs != "a|b'c" {
		t.Fatalf("read %d rows, sum %d, prices %v, locs %q", n, s, p, locs)
	}
	// A keyed table is built once and sent by concurrent queries alike (run with -race).
	keyed := externalSegs
	keyed.Key = "external-test"
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sum uint64
			err := db.QueryRow(WithExternal(context.Background(), keyed), Tool("SELECT sum(s) FROM _t")).Scan(&sum)
			if err == nil && sum != 30 {
				err = fmt.Errorf("sum %d", sum)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// chDB cannot receive external data: the table is inlined as format(Values, …) (null()
// when empty).
func TestInlineExternal(t *testing.T) {
	got, err := InlineExternal("SELECT * FROM _t WHERE k IN (SELECT k FROM  _t) AND x = '_tx'", []External{externalSegs})
	if err != nil {
		t.Fatal(err)
	}
	want := `FROM format(Values, 'k UInt8, s UInt32, p Array(Float64), loc String', '(1, 10, [0.5, 1.25], \'a\'), (2, 20, [], \'b\\\'c\')')`
	if strings.Count(got, want) != 2 || !strings.Contains(got, "'_tx'") {
		t.Fatalf("inlined: %s", got)
	}
	empty := External{Name: "_t", Columns: []ExternalColumn{{"k", "UInt8", []uint8{}}, {"s", "UInt32", []uint32{}},
		{"p", "Array(Float64)", [][]float64{}}, {"loc", "String", []string{}}}}
	if got, _ := InlineExternal("SELECT * FROM _t", []External{empty}); got != "SELECT * FROM null('k UInt8, s UInt32, p Array(Float64), loc String')" {
		t.Fatalf("empty: %s", got)
	}
}
