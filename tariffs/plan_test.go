package tariffs

import (
	"encoding/json"
	"testing"
	"time"
)

// A window priced again from a later day (priced buckets' stale days) runs tier counters
// only from that day's tier period: as a plan made for that day would.
func TestLookbackFromALaterDayIsThatDaysTierPeriod(t *testing.T) {
	tr := Tariff{ID: "T", Timezone: "Europe/London", TierPeriod: TierMonth}
	tiers := `[{"months":["All"],"days_and_hours":[{"days":["All"],"hours":[
		{"valid_from":"00:00:00","valid_to":"00:00:00","rate":[{"fixed":0.18,"to_kwh":200},{"fixed":0.29}]}]}]}]`
	if err := json.Unmarshal([]byte(tiers), &tr.Schedule); err != nil {
		t.Fatal(err)
	}
	at := func(s string) int64 { v, _ := time.Parse(time.RFC3339, s); return v.Unix() }
	p := planOf([]Tariff{tr}, at("2024-11-27T00:00:00Z"), at("2025-01-02T00:00:00Z"), true)
	day := func(u int64) string { return time.Unix(u, 0).UTC().Format(time.RFC3339) }
	// London's 1 November (GMT) less a day; 1 December less a day.
	if got := day(p.Lookback); got != "2024-10-31T00:00:00Z" {
		t.Fatalf("plan's lookback %s", got)
	}
	if got := day(p.LookbackFrom(at("2024-12-31T00:00:00Z"))); got != "2024-11-30T00:00:00Z" {
		t.Errorf("lookback from 31 December: %s, want 2024-11-30T00:00:00Z", got)
	}
	if got := p.LookbackFrom(at("2024-11-27T00:00:00Z")); got != p.Lookback {
		t.Errorf("lookback from the plan's own start: %s, want the plan's", day(got))
	}
	untiered := planOf(nil, at("2024-11-27T00:00:00Z"), at("2025-01-02T00:00:00Z"), true)
	if got := untiered.LookbackFrom(at("2024-12-31T00:00:00Z")); got != untiered.Lookback {
		t.Errorf("untiered: %s, want the plan's start", day(got))
	}
}
