package tariffs

import (
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

func TestTariffInputReportsEveryProblem(t *testing.T) {
	bad := "Mars/Olympus"
	tier := "WEEK"
	in := Input{LocationID: "loc_000000000000000000000001", Direction: "SIDEWAYS", Type: Commodity,
		Timezone: &bad, TierPeriod: &tier}
	err := in.validate()
	e := kwhouse.AsError(err)
	if e == nil || e.Param != "direction" || e.Code != "invalid_value" {
		t.Fatalf("first problem: %v", err)
	}
	if !strings.Contains(e.Message, "(and 5 more problems)") {
		t.Errorf("message %q does not count the others", e.Message)
	}
	var params []string
	for _, p := range []string{"contract_start_date", "contract_end_date", "tier_period", "timezone", "schedule"} {
		found := false
		for _, inner := range unwrapAll(err) {
			if ie := kwhouse.AsError(inner); ie != nil && ie.Param == p {
				found = true
			}
		}
		if !found {
			params = append(params, p)
		}
	}
	if len(params) > 0 {
		t.Errorf("problems not reported: %v (%v)", params, err)
	}
	good := Input{LocationID: "loc_000000000000000000000001", Direction: Import, Type: Commodity,
		ContractStartDate: ts("2024-01-01T00:00:00Z"), ContractEndDate: ts("2025-01-01T00:00:00Z"), Schedule: Schedule{{}}}
	if err := good.validate(); err != nil {
		t.Errorf("a good input: %v", err)
	}
}

// unwrapAll lists the errors of err's chain, joined ones included.
func unwrapAll(err error) []error {
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, unwrapAll(e)...)
		}
	case interface{ Unwrap() error }:
		if e := u.Unwrap(); e != nil {
			out = append(out, unwrapAll(e)...)
		}
	}
	return out
}

func ts(s string) *catalog.Timestamp {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	c := catalog.Timestamp(t)
	return &c
}
