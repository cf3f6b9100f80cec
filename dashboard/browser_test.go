package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kwhouse/kwhouse/demo"
	"github.com/kwhouse/kwhouse/testkit/apitest"
	kbrowser "github.com/kwhouse/kwhouse/testkit/browser"
)

// The test fleet's window: three days over a month's end, so that the month table has two rows.
var from, to = time.Date(2021, 1, 30, 0, 0, 0, 0, time.UTC), time.Date(2021, 2, 2, 0, 0, 0, 0, time.UTC)

// TestDashboardShowsWhatTheAPIAnswers loads a fleet through the API, opens the page in
// headless Chromium, enters the key and requires every figure of its tables, and every
// shaded slot, to be what the API answers; without a key the page shows only the form.
func TestDashboardShowsWhatTheAPIAnswers(t *testing.T) {
	kbrowser.Binary(t) // skips before the fleet is loaded when there is no browser
	api := apitest.Start(t, apitest.Options{})
	acc := api.NewAccount("dashboard")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := &demo.Client{Base: api.URL, Key: acc.TestKey, HTTP: &httpClient}
	if _, err := demo.Load(ctx, client, testFleet()); err != nil {
		t.Fatalf("load the fleet: %v", err)
	}
	if again, err := demo.Load(ctx, client, testFleet()); !errors.Is(err, demo.ErrLoaded) {
		t.Fatalf("loading the fleet twice: %+v %v, want demo.ErrLoaded", again, err)
	}
	b := openBrowser(t)
	page := fmt.Sprintf("%s/dashboard?from=%s&to=%s", api.URL, from.Format(time.DateOnly), to.Format(time.DateOnly))

	b.Run(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("key-form")))
	b.requireNoData("before a key is entered")
	b.Screenshot("no-key")

	b.Run(chromedp.SendKeys(chromedp.ID("key"), "sk_test_"+strings.Repeat("0", 64)), chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("key-error").textContent !== ""`))
	if msg := b.Text(`document.getElementById("key-error").textContent`); msg != "The API refused this key." {
		t.Errorf("a wrong key: error %q", msg)
	}
	b.requireNoData("with a wrong key")

	b.Run(chromedp.Evaluate[chromedp.Void](`document.getElementById("key").value = ""`), chromedp.SendKeys(chromedp.ID("key"), acc.TestKey),
		chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)))
	b.waitFor("fleet")
	b.Screenshot("fleet")
	checkFleet(t, b, api.As(acc.Test()))
	checkCSV(t, b, api, acc.TestKey)

	var agile string
	for _, r := range b.table("fleet-locations") {
		if r.Cells[0] == "demo-london-agile" {
			agile = r.Key
		}
	}
	if agile == "" {
		t.Fatalf("no demo-london-agile row in the locations table")
	}
	b.Run(chromedp.Click(chromedp.CSS(`#fleet-locations a[href="#` + agile + `"]`)))
	b.waitFor(agile)
	b.Screenshot("location-agile")
	checkLocation(t, b, api.As(acc.Test()), agile)

	sydney := locationID(t, api.As(acc.Test()), "demo-sydney-solar")
	b.Run(chromedp.Evaluate[chromedp.Void](`location.hash = "#` + sydney + `"`))
	b.waitFor(sydney)
	b.Screenshot("location-sydney")
	checkLocation(t, b, api.As(acc.Test()), sydney)

	b.Run(chromedp.Click(chromedp.ID("forget")), chromedp.WaitVisible(chromedp.ID("key-form")))
	b.requireNoData("after Forget key")
	if kept := b.Text(`(sessionStorage.getItem("kwhouse.key") || "") + (localStorage.getItem("kwhouse.key") || "")`); kept != "" {
		t.Errorf("Forget key left the key stored: %q", kept)
	}
}

// testFleet is three days of half-hourly market prices (some negative) and readings.
func testFleet() demo.Fleet {
	var f demo.Fleet
	for i, at := 0, from.Add(-24*time.Hour); at.Before(to.Add(24 * time.Hour)); i, at = i+1, at.Add(30*time.Minute) {
		f.Agile = append(f.Agile, demo.Price{Start: at, Price: float64(i*37%60-10) / 200})
	}
	for i, at := 0, from; at.Before(to); i, at = i+1, at.Add(30*time.Minute) {
		f.London = append(f.London, demo.Reading{Start: at, Wh: float64(100 + i*53%400), Direction: "IMPORT"})
		f.Sydney = append(f.Sydney, demo.Reading{Start: at, Wh: float64(200 + i*29%300), Direction: "IMPORT"},
			demo.Reading{Start: at, Wh: float64(i * 31 % 500), Direction: "EXPORT"})
	}
	return f
}

// checkCSV downloads the daily export CSV from the page and requires the API's CSV.
func checkCSV(t *testing.T, b *browser, api *apitest.API, key string) {
	t.Helper()
	got := b.download(`button.csv[data-aggregation="DAY"][data-direction="EXPORT"]`)
	r := api.Do(apitest.Request{Method: "POST", Path: "/costs/fleet", Auth: "Bearer " + key, Header: map[string]string{"Accept": "text/csv"},
		Body: map[string]any{"start_time": from.Format(time.RFC3339), "end_time": to.Format(time.RFC3339),
			"aggregation": "DAY", "direction": "EXPORT", "limit": 10000}})
	if r.Status != 200 || len(r.Body) == 0 || string(got) != string(r.Body) {
		t.Errorf("the page's CSV:\n%s\nthe API's (%d):\n%s", got, r.Status, r.Body)
	}
}

func locationID(t *testing.T, call func(string, string, any) apitest.Response, ref string) string {
	t.Helper()
	var list struct{ Data []struct{ ID string } }
	call("GET", "/locations?reference_id="+ref, nil).JSON(t, &list)
	if len(list.Data) != 1 {
		t.Fatalf("location %s: %d found", ref, len(list.Data))
	}
	return list.Data[0].ID
}
