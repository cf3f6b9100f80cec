package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/testkit"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

// importTariff is a two-rate time-of-use tariff body without location_id.
const importTariff = `{"direction":"IMPORT","type":"COMMODITY","contract_start_date":"2024-01-01T00:00:00Z",
"contract_end_date":"2030-01-01T00:00:00Z","schedule":[{"months":["All"],"days_and_hours":[{"days":["All"],
"hours":[{"valid_from":"07:00:00","valid_to":"23:00:00","rate":[{"fixed":0.30}]},
{"valid_from":"23:00:00","valid_to":"07:00:00","rate":[{"fixed":0.10}]}]}]}]}`

func oneLine(s string) string { return strings.Join(strings.Fields(s), "") }

// runCLI runs kwhouse with args against api's database and Redis keys, as an operator
// would beside a running server.
func runCLI(t *testing.T, api *apitest.API, args ...string) (string, error) {
	t.Helper()
	t.Setenv("KWHOUSE_CLICKHOUSE_ADDR", testkit.ClickHouseConfig(t).Addr)
	t.Setenv("KWHOUSE_CLICKHOUSE_DATABASE", api.Database())
	t.Setenv("KWHOUSE_REDIS_ADDR", testkit.RedisConfig(t).Addr)
	t.Setenv("KWHOUSE_REDIS_KEY_PREFIX", api.RedisPrefix())
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", "")
	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestImportCreatesLocationsWithTariffsAsTheAPIDoes(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("importer")
	do := api.As(acc.Test())
	cus := do("POST", "/customers", map[string]any{"reference_id": "C"}).Map(t)["id"].(string)
	if r := do("POST", "/locations", map[string]any{"reference_id": "EXISTING", "postal_address": map[string]any{"country_code": "GB"}}); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	tariff := oneLine(importTariff)
	second := strings.Replace(tariff, `"2024-01-01T00:00:00Z"`, `"2025-06-01T00:00:00Z"`, 1)
	lines := []string{
		`{"reference_id":"M-1","customer_id":"` + cus + `","postal_address":{"country_code":"GB"},"tariffs":[` + tariff + `]}`,
		`{"reference_id":"M-2","timezone":"America/New_York","currency_code":"USD"}`, // the --tariff template
		`{"reference_id":"M-3","postal_address":{"country_code":"GB"},"tariffs":[]}`,
		`{"reference_id":"M-4","postal_address":{"country_code":"XX"}}`,
		`{"reference_id":"M-5","postal_address":{"country_code":"GB"},"tariffs":[{"direction":"IMPORT","type":"COMMODITY","contract_start_date":"2024-01-01T00:00:00Z","contract_end_date":"2025-01-01T00:00:00Z"}]}`,
		`{"reference_id":"M-1","postal_address":{"country_code":"GB"}}`,
		`{"reference_id":"M-6","customer_id":"cus_000000000000000000000000","postal_address":{"country_code":"GB"}}`,
		`{"reference_id":"M-7","postal_address":{"country_code":"GB"},"tariffs":[` + tariff + `,` + second + `]}`,
		`{"reference_id":"M-8","bogus":1}`,
		`not json`,
		`{"reference_id":"EXISTING","postal_address":{"country_code":"GB"}}`,
	}
	dir := t.TempDir()
	file, tpl := filepath.Join(dir, "fleet.ndjson"), filepath.Join(dir, "tariff.json")
	write(t, file, strings.Join(lines, "\n")+"\n")
	write(t, tpl, strings.Replace(importTariff, "0.30", "0.40", 1))

	out, err := runCLI(t, api, "import", "--account", acc.ID, "--tariff", tpl, file)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	if want := "3 locations and 2 tariffs created, 1 rows already there, 7 failed"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	rejects := readRejects(t, file+".rejects.ndjson")
	for line, want := range map[int]string{
		4:  "postal_address.country_code: \"XX\" is not an ISO 3166-1 alpha-2 code such as GB (invalid_country)",
		5:  "tariffs[0].schedule: a tariff without market rates needs a schedule (parameter_missing)",
		6:  "reference_id:",
		7:  "customer_id: no such object: cus_000000000000000000000000 (resource_missing)",
		8:  "tariffs[1].contract_start_date:",
		9:  "bogus: unknown field \"bogus\" (unknown_field)",
		10: "(invalid_json)",
	} {
		if !strings.HasPrefix(rejects[line], want) && !(line == 10 && strings.HasSuffix(rejects[line], want)) {
			t.Errorf("line %d rejected with %q, want %q…", line, rejects[line], want)
		}
	}
	if len(rejects) != 7 {
		t.Errorf("%d rejects, want 7: %v", len(rejects), rejects)
	}
	for _, ref := range []string{"M-4", "M-5", "M-6", "M-7", "M-8"} {
		if n := len(locationsByRef(t, do, ref)); n != 0 {
			t.Errorf("rejected row %s left %d locations", ref, n)
		}
	}

	// M-1 is what POST /locations and POST /tariffs/elements make of the same bodies.
	m1 := only(t, locationsByRef(t, do, "M-1"))
	twin := do("POST", "/locations", map[string]any{"reference_id": "TWIN", "customer_id": cus,
		"postal_address": map[string]any{"country_code": "GB"}}).Map(t)
	var body map[string]any
	_ = json.Unmarshal([]byte(tariff), &body)
	body["location_id"] = twin["id"]
	if r := do("POST", "/tariffs/elements", body); r.Status != 200 {
		t.Fatalf("twin tariff: %d %s", r.Status, r.Body)
	}
	got, want := do("GET", "/locations/"+m1["id"].(string), nil), do("GET", "/locations/"+twin["id"].(string), nil)
	if masked(got.Body) != masked(want.Body) {
		t.Errorf("imported location\n%s\nAPI-created\n%s", masked(got.Body), masked(want.Body))
	}
	gotT := do("GET", "/tariffs/elements?location_id="+m1["id"].(string), nil)
	wantT := do("GET", "/tariffs/elements?location_id="+twin["id"].(string), nil)
	if masked(gotT.Body) != masked(wantT.Body) || !strings.Contains(string(gotT.Body), `"fixed":0.3`) {
		t.Errorf("imported tariffs\n%s\nAPI-created\n%s", masked(gotT.Body), masked(wantT.Body))
	}
	for _, ev := range []string{"location.create", "tariff.create"} {
		r := do("GET", "/events?event_type="+ev+"&limit=100", nil).Map(t)["data"].([]any)
		found := false
		for _, e := range r {
			data, _ := e.(map[string]any)["data"].(map[string]any)
			found = found || data["id"] == m1["id"] || data["location_id"] == m1["id"]
		}
		if !found {
			t.Errorf("no %s event for the imported location", ev)
		}
	}
	// M-2 got the template (0.40), M-3 none.
	m2 := only(t, locationsByRef(t, do, "M-2"))
	if r := do("GET", "/tariffs/elements?location_id="+m2["id"].(string), nil); !strings.Contains(string(r.Body), `"fixed":0.4`) ||
		!strings.Contains(string(r.Body), `"timezone":"America/New_York"`) {
		t.Errorf("M-2 tariffs: %s", r.Body)
	}
	m3 := only(t, locationsByRef(t, do, "M-3"))
	if st := m3["tariff_status"].(map[string]any); st["commodity_import"] != "NOT_CONNECTED" {
		t.Errorf("M-3 status %v", st)
	}

	// Run again: the stored rows are skipped, not created twice.
	out, err = runCLI(t, api, "import", "--account", acc.ID, "--tariff", tpl, file)
	if err != nil {
		t.Fatalf("import again: %v\n%s", err, out)
	}
	if want := "0 locations and 0 tariffs created, 4 rows already there, 7 failed"; !strings.Contains(out, want) {
		t.Errorf("second run lacks %q:\n%s", want, out)
	}
	if n := len(locationsByRef(t, do, "M-1")); n != 1 {
		t.Errorf("M-1 has %d locations after a second import", n)
	}
}

func TestImportReadsCSV(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("csv")
	do := api.As(acc.Test())
	file := filepath.Join(t.TempDir(), "fleet.csv")
	cell := `"` + strings.ReplaceAll("["+oneLine(importTariff)+"]", `"`, `""`) + `"`
	write(t, file, "reference_id,country_code,city,lat,lng,tariffs\n"+
		"C-1,GB,Leeds,53.8,-1.55,"+cell+"\n"+
		"C-2,US,,abc,-74,\n"+
		"C-3,US,,40.7,-74.0,\n"+
		"C-4,GB,,,\n")
	out, err := runCLI(t, api, "import", "--account", acc.ID, file)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	if want := "2 locations and 1 tariffs created, 0 rows already there, 2 failed"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	rej, err := os.ReadFile(file + ".rejects.csv")
	if err != nil || !strings.Contains(string(rej), `3,"geo_location.lat: wrong type`) || !strings.Contains(string(rej), `5,"row: row has 5 columns, the header 6`) {
		t.Errorf("rejects %q (%v)", rej, err)
	}
	c1 := only(t, locationsByRef(t, do, "C-1"))
	if c1["timezone"] != "Europe/London" || c1["postal_address"].(map[string]any)["city"] != "Leeds" ||
		c1["tariff_status"].(map[string]any)["commodity_import"] != "CONNECTED" {
		t.Errorf("C-1: %v", c1)
	}
	if c3 := only(t, locationsByRef(t, do, "C-3")); c3["timezone"] != "America/New_York" || c3["currency_code"] != "USD" {
		t.Errorf("C-3 (zone from coordinates): %v", c3)
	}
}

func write(t *testing.T, file, text string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readRejects(t *testing.T, file string) map[int]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Line  int
			Error string
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("reject line %q: %v", l, err)
		}
		out[r.Line] = r.Error
	}
	return out
}

func locationsByRef(t *testing.T, do func(string, string, any) apitest.Response, ref string) []any {
	t.Helper()
	return do("GET", "/locations?reference_id="+ref, nil).Map(t)["data"].([]any)
}

func only(t *testing.T, list []any) map[string]any {
	t.Helper()
	if len(list) != 1 {
		t.Fatalf("%d objects, want 1: %v", len(list), list)
	}
	return list[0].(map[string]any)
}

var idsAndTimes = regexp.MustCompile(`"(id|location_id|reference_id|time_created)":"[^"]*"|"tariff_elements":\["[^\]]*\]|[a-z]{3}_[0-9a-zA-Z]{24}`)

func masked(b []byte) string { return idsAndTimes.ReplaceAllString(string(b), "…") }

// kwhouse import refuses the time zones POST /locations and POST /tariffs/elements refuse
// (one rule): a zone ClickHouse cannot load would fail every local-day query.
func TestImportRefusesZonesClickHouseCannotLoad(t *testing.T) {
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("zones")
	do := api.As(acc.Test())
	withZone := strings.Replace(oneLine(importTariff), `"direction"`, `"timezone":"right/UTC","direction"`, 1)
	file := filepath.Join(t.TempDir(), "fleet.ndjson")
	write(t, file, strings.Join([]string{
		`{"reference_id":"Z-1","timezone":"right/UTC","currency_code":"GBP"}`,
		`{"reference_id":"Z-2","timezone":"posix/Europe/London","currency_code":"GBP"}`,
		`{"reference_id":"Z-3","timezone":"Europe/London","currency_code":"GBP","tariffs":[` + withZone + `]}`,
		`{"reference_id":"Z-4","timezone":"US/Eastern","currency_code":"USD"}`,
	}, "\n")+"\n")
	out, err := runCLI(t, api, "import", "--account", acc.ID, file)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	if want := "1 locations and 0 tariffs created, 0 rows already there, 3 failed"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	rejects := readRejects(t, file+".rejects.ndjson")
	for line, want := range map[int]string{1: "timezone: ", 2: "timezone: ", 3: "tariffs[0].timezone: "} {
		if !strings.HasPrefix(rejects[line], want) || !strings.HasSuffix(rejects[line], "(invalid_timezone)") {
			t.Errorf("line %d rejected with %q, want %q… (invalid_timezone)", line, rejects[line], want)
		}
	}
	for _, ref := range []string{"Z-1", "Z-2", "Z-3"} {
		if n := len(locationsByRef(t, do, ref)); n != 0 {
			t.Errorf("rejected row %s left %d locations", ref, n)
		}
	}
	if z := only(t, locationsByRef(t, do, "Z-4"))["timezone"]; z != "US/Eastern" {
		t.Errorf("Z-4 zone %v, want US/Eastern", z)
	}
}
