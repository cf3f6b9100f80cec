package tariffs

import (
	"fmt"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse/catalog"
)

func contract(id, start, end string) *Tariff {
	s, _ := time.Parse(time.RFC3339, start)
	e, _ := time.Parse(time.RFC3339, end)
	return &Tariff{ID: id, ContractStartDate: catalog.Timestamp(s), ContractEndDate: catalog.Timestamp(e)}
}

func describe(ss []Source) string {
	out := ""
	for _, s := range ss {
		out += fmt.Sprintf("%s %s..%s %.1f; ", s.Tariff.ID, time.Unix(s.From, 0).UTC().Format("2006-01-02"), time.Unix(s.To, 0).UTC().Format("2006-01-02"), s.Confidence)
	}
	return out
}

func TestSourcesContractsGapsAndDecay(t *testing.T) {
	a := contract("A", "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z")
	b := contract("B", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z")
	// Gap Feb 1..Mar 1 (29 days): the first half (to Feb 15 12:00) goes to A, which ended;
	// all of it is less than 90 days from a contract, so confidence 0.8.
	got := describe(sources([]*Tariff{b, a}, utc("2024-01-15T00:00:00Z"), utc("2024-03-15T00:00:00Z")))
	want := "A 2024-01-15..2024-02-01 1.0; A 2024-02-01..2024-02-15 0.8; B 2024-02-15..2024-03-01 0.8; B 2024-03-01..2024-03-15 1.0; "
	if got != want {
		t.Errorf("gap:\n got %s\nwant %s", got, want)
	}
	// After the last contract: 0.8 for 90 days, 0.6, 0.4, then 0.2 for good.
	got = describe(sources([]*Tariff{a}, utc("2024-02-01T00:00:00Z"), utc("2025-06-01T00:00:00Z")))
	want = "A 2024-02-01..2024-05-01 0.8; A 2024-05-01..2024-07-30 0.6; A 2024-07-30..2024-10-28 0.4; A 2024-10-28..2025-06-01 0.2; "
	if got != want {
		t.Errorf("after:\n got %s\nwant %s", got, want)
	}
	// Before the first contract, counted back from its start.
	got = describe(sources([]*Tariff{a}, utc("2023-09-01T00:00:00Z"), utc("2024-01-02T00:00:00Z")))
	// Sep 1 is 122 days before Jan 1: step 1 (0.6) from the window start to Oct 3 (90 days before).
	want = "A 2023-09-01..2023-10-03 0.6; A 2023-10-03..2024-01-01 0.8; A 2024-01-01..2024-01-02 1.0; "
	if got != want {
		t.Errorf("before:\n got %s\nwant %s", got, want)
	}
}
