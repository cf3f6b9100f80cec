package tariffs

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/docstore"
)

// A stored tariff decodes to what encoding/json gives for the same body (docstore writes
// bodies with encoding/json): every field of a tiered, market and demand-charged tariff,
// bodies of earlier versions with integer day numbers, other letter case and unknown
// fields, and the same refusal of a body that is not a tariff.
func TestDecodeTariffAgreesWithEncodingJSON(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	minutes := 15
	full := Tariff{ID: "trf_1", Object: "tariff", LocationID: "loc_1", IsLinked: true, ConnectionType: "MANUAL",
		Direction: "IMPORT", Type: "COMMODITY", Status: "CONNECTED", Timezone: "Europe/Brussels", DisplayName: "Night & day",
		ProviderID: "prv_1", MarketRates: true, MarketID: "mkt_1", TierPeriod: "MONTH",
		ContractStartDate: catalog.Timestamp(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)),
		ContractEndDate:   catalog.Timestamp(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)),
		Schedule: Schedule{{Months: []string{"All"}, DaysAndHours: []DaysAndHour{{Days: []DayName{"Weekday", "6"},
			Hours: []HourRange{{ValidFrom: "00:00:00", ValidTo: "07:00:00", Rate: []Band{
				{Fixed: f(0.09), ToKWh: f(100), SurchargeFixed: f(0.01), SurchargePercentage: f(5)}, {Fixed: f(0.12)}}},
				{ValidFrom: "07:00:00", ValidTo: "00:00:00", Rate: []Band{{SurchargeFixed: f(0.02)}}}}}}}},
		StandingCharge: f(0.45), TaxPercentage: f(21),
		DemandCharges: []DemandCharge{{Months: []string{"Jan"}, RatePerKW: f(3.5), IntervalMinutes: &minutes, MinimumKW: 2.5}},
		TimeCreated:   catalog.Timestamp(time.Date(2024, 2, 3, 4, 5, 6, 0, time.UTC)), AccountID: "acc_1"}
	stored, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{
		"every field": string(stored),
		"integer day numbers, other case, unknown fields": `{"ID":"trf_2","Location_Id":"loc_2","direction":"EXPORT",
			"schedule":[{"months":["Jan","Feb"],"days_and_hours":[{"days":[1,7],"hours":[{"valid_from":"00:00:00",
			"valid_to":"00:00:00","rate":[{"fixed":-0.05,"to_kwh":null}]}]}]}],"retired_field":{"a":[1,2]},
			"contract_start_date":"2024-03-01T00:00:00Z","time_created":"2024-03-01T10:00:00Z"}`,
		"nulls": `{"id":"trf_3","schedule":null,"standing_charge":null,"demand_charges":null}`,
	}
	for name, body := range bodies {
		var want Tariff
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", name, err)
		}
		got, err := decodeTariff(docstore.Doc{Kind: KindTariff, ID: want.ID, Body: []byte(body)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded\n%+v\nencoding/json gives\n%+v", name, got, want)
		}
	}
	if _, err := decodeTariff(docstore.Doc{Kind: KindTariff, ID: "trf_bad", Body: []byte(`{"schedule":"weekdays"}`)}); err == nil {
		t.Error("a schedule that is a string decoded without an error")
	}
}
