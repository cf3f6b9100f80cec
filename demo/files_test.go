package demo

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFilesBecomeReadingsAndPricesInTheWindow(t *testing.T) {
	from, to := time.Date(2020, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 12, 1, 1, 0, 0, 0, time.UTC)
	at := func(hh, mm int) time.Time { return time.Date(2020, 12, 1, hh, mm, 0, 0, time.UTC) }

	agile, err := ReadAgile(strings.NewReader("2020-11-30T23:30:00Z,23:30,A,Eastern_England,9.1\n"+
		"2020-12-01T00:00:00Z,00:00,A,Eastern_England,8.1585\n2020-12-01T00:30:00Z,00:30,A,Eastern_England,-0.21\n"+
		"2020-12-01T01:00:00Z,01:00,A,Eastern_England,7\n"), from, to)
	if want := []Price{{at(0, 0), 0.081585}, {at(0, 30), -0.0021}}; err != nil || !reflect.DeepEqual(agile, want) {
		t.Errorf("agile: %v %v, want %v (pence become pounds, only starts in the window)", agile, err, want)
	}

	// Newest first; each timestamp ends its half hour.
	house, err := ReadHousehold(strings.NewReader("halfhour ending at,usage\n2020-12-01 01:30:00+00:00,0.5\n"+
		"2020-12-01 01:00:00+00:00,0.1950\n2020-12-01 00:30:00+00:00,0.2040\n2020-12-01 00:00:00+00:00,9\n"), from, to)
	if want := []Reading{{at(0, 0), 204, "IMPORT"}, {at(0, 30), 195, "IMPORT"}}; err != nil || !reflect.DeepEqual(house, want) {
		t.Errorf("household: %v %v, want %v", house, err, want)
	}

	// Naive Sydney start times (AEDT, UTC+11 in December), average kW, moved nine years.
	sydney, err := ReadAusgrid(strings.NewReader(",GC,GG\n2011-12-01 10:30:00,0.392,1.5\n2011-12-01 11:00:00,0.5,2\n"+
		"2011-12-01 12:00:00,0.5,2\n"), from, to, 9)
	want := []Reading{{at(0, 0), 250, "IMPORT"}, {at(0, 0), 1000, "EXPORT"}}
	if err != nil || len(sydney) != 2 || !sydney[0].Start.Equal(at(0, 0)) || sydney[0].Wh != 250 || sydney[1].Wh != 1000 ||
		sydney[1].Direction != "EXPORT" {
		t.Errorf("ausgrid: %v %v, want %v (10:30 AEDT is 23:30Z the day before: outside)", sydney, err, want)
	}

	if _, err := ReadAgile(strings.NewReader("2020-12-01T00:00:00Z,00:00,A,Eastern_England,x\n"), from, to); err == nil ||
		!strings.Contains(err.Error(), "line 1") {
		t.Errorf("a bad price: %v, want an error naming line 1", err)
	}
}
