package catalog

import (
	"strings"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
)

func TestCheckSeriesReportsEveryProblem(t *testing.T) {
	h := func(n int) time.Time { return time.Date(2025, 3, 1, n, 0, 0, 0, time.UTC) }
	spans := []Span{
		{h(0), h(1)}, // fine
		{h(2), h(2)}, // empty
		{h(3), h(5)}, // fine
		{h(4), h(6)}, // overlaps [2]
		{h(7), h(8)}, // fine, but its value is bad
	}
	err := CheckSeries(len(spans), Series{What: "prices", Max: 10, Item: func(i int, prefix string, p *kwhouse.Problems) Span {
		if i == 4 {
			p.Add("invalid_number", prefix+".price", "price must be finite")
		}
		return spans[i]
	}})
	var got []string
	for e := error(kwhouse.AsError(err)); e != nil; {
		ke := kwhouse.AsError(e)
		got = append(got, ke.Code+"@"+ke.Param)
		e = ke.Err
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				k := kwhouse.AsError(inner)
				got = append(got, k.Code+"@"+k.Param)
			}
			break
		}
	}
	want := "invalid_interval@[1].end_time,invalid_number@[4].price,overlapping_prices@[3].start_time"
	if strings.Join(got, ",") != want {
		t.Fatalf("problems %v, want %s", got, want)
	}
}

func TestCheckSeriesCount(t *testing.T) {
	item := func(i int, prefix string, p *kwhouse.Problems) Span {
		t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		return Span{t0.Add(time.Duration(i) * time.Minute), t0.Add(time.Duration(i+1) * time.Minute)}
	}
	if ke := kwhouse.AsError(CheckSeries(0, Series{What: "prices", Max: 2, Item: item})); ke == nil || ke.Code != "parameter_missing" {
		t.Fatalf("empty series: %+v", ke)
	}
	err := CheckSeries(3, Series{What: "prices", Max: 2, Item: item})
	if ke := kwhouse.AsError(err); ke == nil || ke.Code != "too_many_prices" || ke.Kind != kwhouse.KindTooLarge {
		t.Fatalf("3 of at most 2: %+v", ke)
	}
	if err := CheckSeries(2, Series{What: "prices", Max: 2, Item: item}); err != nil {
		t.Fatalf("a good series: %v", err)
	}
}
