package httpapi

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/query"
)

// csvOracle writes the answer's fields with encoding/csv: the bytes fleetCSV must equal.
func csvOracle(t testing.TB, out query.FleetCost, withCharges bool) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	header := []string{out.GroupBy + "_id", "date", "start_time", "end_time", "currency_code", "energy_value",
		"energy_value_exact", "tariff_value", "tariff_confidence"}
	if withCharges {
		header = append(header, "charges_energy", "charges_standing", "charges_demand", "charges_tax", "charges_total")
	}
	_ = w.Write(header)
	text := func(a query.Amount) string {
		b, err := a.AppendText(nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, r := range out.Data {
		var start, end string
		if r.StartTime != nil {
			start, end = r.StartTime.Time().Format(time.RFC3339), r.EndTime.Time().Format(time.RFC3339)
		}
		row := []string{r.LocationID + r.DeviceID + r.CustomerID, r.Date, start, end, r.CurrencyCode,
			strconv.FormatInt(r.Energy.Value, 10), text(r.Energy.ValueExact), text(r.Tariff.Value), text(r.Tariff.Confidence)}
		if withCharges {
			ch := r.Charges
			if ch == nil {
				ch = &query.Charges{}
			}
			row = append(row, text(ch.Energy), text(ch.Standing), text(ch.Demand), text(ch.Tax), text(ch.Total))
		}
		_ = w.Write(row)
	}
	w.Flush()
	return buf.Bytes()
}

// monthByDay is an answer of n locations × the 31 local days of March 2024 in London.
func monthByDay(n int) query.FleetCost {
	zone, _ := time.LoadLocation("Europe/London")
	var days [31][2]catalog.Timestamp
	for d := range days {
		days[d] = [2]catalog.Timestamp{catalog.Timestamp(time.Date(2024, 3, d+1, 0, 0, 0, 0, zone).UTC()),
			catalog.Timestamp(time.Date(2024, 3, d+2, 0, 0, 0, 0, zone).UTC())}
	}
	out := query.FleetCost{GroupBy: "location"}
	for l := range n {
		for d := range days {
			wh := float64(l*31+d) * 123.4567
			out.Data = append(out.Data, query.FleetRow{LocationID: fmt.Sprintf("loc_%026d", l), Date: fmt.Sprintf("2024-03-%02d", d+1),
				StartTime: &days[d][0], EndTime: &days[d][1], CurrencyCode: "GBP",
				Energy: query.EnergyValue{Value: int64(math.Round(wh)), ValueExact: query.Amount(wh)},
				Tariff: query.TariffValue{Value: query.Amount(wh * 0.000245), Confidence: 1}})
		}
	}
	return out
}

func TestFleetCSVIsEncodingCSVs(t *testing.T) {
	out := monthByDay(3)
	out.Data[1].Charges = &query.Charges{Energy: 1.5, Standing: 0.4567891, Demand: -0.0000001, Tax: 1e-7, Total: 2.25}
	out.Data[2].Tariff.Value = query.Amount(math.Copysign(0, -1))
	// Ids are checked ids, but a field that needs quoting is quoted as encoding/csv does.
	for i, id := range []string{`a,b`, `say "hi"`, " lead", "\tlead", `\.`, "two\nlines", "cr\rhere", "", `"`, "ü,"} {
		r := out.Data[0]
		r.LocationID = id
		r.CurrencyCode = id
		out.Data = append(out.Data, r)
		out.Data[len(out.Data)-1].Date = fmt.Sprint(i)
	}
	out.Data = append(out.Data, query.FleetRow{CustomerID: "cus_1", Date: "2024-03", CurrencyCode: "EUR"}) // no bounds
	for _, charges := range []bool{false, true} {
		got, err := fleetCSV(out, charges)
		if err != nil {
			t.Fatal(err)
		}
		if want := csvOracle(t, out, charges); !bytes.Equal(got, want) {
			t.Errorf("charges %v: got\n%s\nwant\n%s", charges, got, want)
		}
	}
}

func TestFleetCSVRefusesAnAmountThatIsNoNumber(t *testing.T) {
	out := monthByDay(1)
	out.Data[3].Tariff.Value = query.Amount(math.NaN())
	if _, err := fleetCSV(out, false); err == nil {
		t.Error("a NaN amount was written")
	}
	out = monthByDay(1)
	out.Data[4].Energy.ValueExact = query.Amount(math.Inf(1))
	if _, err := fleetCSV(out, false); err == nil {
		t.Error("an infinite energy was written")
	}
	out = monthByDay(1)
	out.Data[5].Charges = &query.Charges{Tax: query.Amount(math.Inf(-1))}
	if _, err := fleetCSV(out, true); err == nil {
		t.Error("an infinite tax was written")
	}
}

// BenchmarkFleetCSV encodes a month by DAY of 1,000 locations (31,000 rows).
func BenchmarkFleetCSV(b *testing.B) {
	out := monthByDay(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fleetCSV(out, false); err != nil {
			b.Fatal(err)
		}
	}
}
