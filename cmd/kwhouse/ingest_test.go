package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/accounts"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/docstore"
)

func TestIngestLoadsFilesAndRejectsBadRows(t *testing.T) {
	db := useTestDB(t)
	ctx := context.Background()
	acc, err := accounts.NewStore(db, nil).Create(ctx, "bulk")
	if err != nil {
		t.Fatal(err)
	}
	scope := kwhouse.Scope{AccountID: acc.AccountID}
	cat := catalog.New(docstore.New(db, docstore.NoCache{}, time.Now), nil)
	tz, cur := "Europe/London", "GBP"
	loc, err := cat.CreateLocation(ctx, scope, catalog.LocationInput{Timezone: &tz, CurrencyCode: &cur})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	csvFile := filepath.Join(dir, "reads.csv")
	csvText := "location_id,start_time,end_time,units,value,record_reference_id\n" +
		loc.ID + ",2024-01-01T00:00:00Z,2024-01-01T00:30:00Z,KWH,0.5,a\n" +
		loc.ID + ",2024-01-01T00:30:00Z,2024-01-01T01:00:00Z,WH,250,b\n" +
		loc.ID + ",2024-01-01T01:00:00Z,2024-01-01T00:00:00Z,WH,1,bad-times\n" +
		"loc_000000000000000000000000,2024-01-01T00:00:00Z,2024-01-01T00:30:00Z,WH,1,no-loc\n"
	if err := os.WriteFile(csvFile, []byte(csvText), 0o600); err != nil {
		t.Fatal(err)
	}
	var nd bytes.Buffer
	zw := gzip.NewWriter(&nd)
	for i := 0; i < 48; i++ {
		s := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 30 * time.Minute)
		fmt.Fprintf(zw, `{"location_id":%q,"start_time":%q,"end_time":%q,"units":"W","value":1000}`+"\n",
			loc.ID, s.Format(time.RFC3339), s.Add(30*time.Minute).Format(time.RFC3339))
	}
	zw.Write([]byte("{not json\n"))
	zw.Close()
	ndFile := filepath.Join(dir, "reads.ndjson.gz")
	if err := os.WriteFile(ndFile, nd.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"ingest", "--account", acc.AccountID, csvFile, ndFile})
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out.String())
	}
	for _, want := range []string{"reads.csv: accepted 2, failed 2", "reads.ndjson.gz: accepted 48, failed 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var n uint64
	var wh float64
	if err := db.QueryRow(ctx, chstore.Tool("SELECT count(), sum(energy_wh) FROM meter_records FINAL WHERE account_id = ?"), acc.AccountID).Scan(&n, &wh); err != nil {
		t.Fatal(err)
	}
	// CSV: 500 + 250 Wh; NDJSON: 48 half-hours at 1000 W = 48 × 500 Wh = 24,000 Wh.
	if n != 50 || wh != 24750 {
		t.Errorf("stored %d records, %v Wh; want 50 and 24750", n, wh)
	}
	rej, err := os.ReadFile(csvFile + ".rejects.csv")
	if err != nil {
		t.Fatal(err)
	}
	if r := string(rej); !strings.Contains(r, "4,end_time must be after start_time") || !strings.Contains(r, "no such location") || !strings.Contains(r, "bad-times") {
		t.Errorf("CSV rejects:\n%s", r)
	}
	ndRej, err := os.ReadFile(ndFile + ".rejects.ndjson")
	if err != nil || !strings.Contains(string(ndRej), `"line":49`) {
		t.Errorf("NDJSON rejects %q (%v)", ndRej, err)
	}
}
