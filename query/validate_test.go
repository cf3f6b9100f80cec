package query

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
)

// problemParams lists the params of every problem in err's chain, first first.
func problemParams(err error) []string {
	var params []string
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if ke, ok := e.(*kwhouse.Error); ok {
			params = append(params, ke.Param)
			walk(ke.Err)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				walk(inner)
			}
			return
		}
		walk(errors.Unwrap(e))
	}
	walk(err)
	return params
}

func TestFleetRequestReportsEveryProblem(t *testing.T) {
	req := FleetRequest{Direction: "SIDEWAYS", GroupBy: "planet", Limit: MaxFleetLimit + 1,
		CustomerID: "loc_1", Start: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC),
		End: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	req.defaults()
	err := req.Validate()
	got := strings.Join(problemParams(err), ",")
	want := "direction,group_by,limit,customer_id,end_time"
	if got != want {
		t.Fatalf("problems at %q, want %q (%v)", got, want, err)
	}
	if ke := kwhouse.AsError(err); ke == nil || ke.Code != "invalid_value" || !strings.Contains(ke.Message, "and 4 more problems") {
		t.Fatalf("first problem: %+v", ke)
	}
}

func TestCostRequestDefaultsAndMissingWindow(t *testing.T) {
	req := CostRequest{}
	req.defaults()
	if req.Direction != "IMPORT" {
		t.Fatalf("direction defaults to %q", req.Direction)
	}
	err := req.validate()
	if got := strings.Join(problemParams(err), ","); got != "start_time" {
		t.Fatalf("problems at %q, want start_time (%v)", got, err)
	}
	if ke := kwhouse.AsError(err); ke == nil || ke.Code != "parameter_missing" {
		t.Fatalf("code: %+v", ke)
	}
}
