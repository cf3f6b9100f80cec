package httpapi_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	kbrowser "github.com/kwhouse/kwhouse/testkit/browser"
)

// connectPage is the connect page open in headless Chromium.
type connectPage struct {
	*kbrowser.Tab
	t *testing.T
}

// fill types each form value into its field as a customer does (dates, which Chromium
// types by its locale's pattern, are set).
func (p connectPage) fill(form url.Values) {
	p.t.Helper()
	for name, v := range form {
		if strings.HasPrefix(name, "contract_") {
			p.Run(chromedp.SetValue(chromedp.ID(name), v[0]))
			continue
		}
		p.Run(chromedp.Clear(chromedp.ID(name)), chromedp.SendKeys(chromedp.ID(name), v[0]))
	}
}

// save clicks "Save my tariff" and returns the status of the page that loads.
func (p connectPage) save() int64 {
	p.t.Helper()
	return p.Load(chromedp.Click(chromedp.ID("save")))
}

// problem is the refusal the page shows ("" for none).
func (p connectPage) problem() string {
	p.t.Helper()
	return p.Text(`document.getElementById("problem")?.textContent ?? ""`)
}

func (p connectPage) value(id string) string {
	p.t.Helper()
	return p.Text(`document.getElementById("` + id + `").value`)
}

// The page driven in headless Chromium as a customer uses it: open the token's connect_url,
// build a two-rate schedule with a typo, see the refusal, leave the day half covered, see
// the API's refusal, complete it, follow the callback; then the token is exchanged and the
// tariff equals one created through the API. A second session chooses the account's
// template instead. Screenshots in .artifacts/connect.
func TestConnectPageInHeadlessChromium(t *testing.T) {
	kbrowser.Binary(t) // skips before the services start when there is no browser
	e := newConnectEnv(t)
	p := connectPage{Tab: kbrowser.Open(t, "connect"), t: t}

	tok, path := e.token("HOME-1")
	if status := p.Load(chromedp.Navigate(e.api.URL + path)); status != 200 {
		t.Fatalf("page: %d", status)
	}
	p.Screenshot("form")
	if n := kbrowser.Eval[int](p.Tab, `document.scripts.length`); n != 0 {
		t.Errorf("the page has %d scripts", n)
	}
	if kbrowser.Eval[bool](p.Tab, `document.getElementById("template") !== null`) {
		t.Errorf("templates offered with none in the account")
	}

	typo := twoRates()
	typo.Set("price_0", "0.1O")
	p.fill(typo)
	if status := p.save(); status != 400 || !strings.Contains(p.problem(), "rows[0].price") {
		t.Fatalf("a price with a typo: %d %q", status, p.problem())
	}
	p.Screenshot("refused-price")
	if got := p.value("price_0") + " " + p.value("to_1"); got != "0.1O 00:00" {
		t.Errorf("the refused form kept %q, want what was typed", got)
	}

	halfDay := twoRates()
	halfDay.Set("price_1", "")
	p.fill(halfDay)
	if status := p.save(); status != 400 || !strings.Contains(p.problem(), "schedule") {
		t.Fatalf("07:00–24:00 without a price: %d %q", status, p.problem())
	}
	p.Screenshot("refused-schedule")
	if got := e.do("GET", "/locations?reference_id=HOME-1", nil).Map(t)["data"].([]any); len(got) != 0 {
		t.Fatalf("a refused form stored a location: %v", got)
	}

	p.fill(twoRates())
	if status := p.save(); status != 200 || p.problem() != "" {
		t.Fatalf("save: %d %q", status, p.problem())
	}
	p.Screenshot("saved")
	if href := p.Text(`document.getElementById("continue").href`); href != "https://app.example/done?x=1&connect_token="+tok {
		t.Errorf("continue to %q", href)
	}

	ex := e.exchange(tok)
	if ex.LocationReferenceID != "HOME-1" {
		t.Errorf("exchange: %+v", ex)
	}
	e.requireSameAsAPI(ex.TariffID, ex.LocationID, "Two rates", twoRateHours())
	// Used: the page is gone and the token exchanged.
	if status := p.Load(chromedp.Navigate(e.api.URL + path)); status != 409 || !strings.Contains(p.Text(`document.body.textContent`), "already complete") {
		t.Errorf("page after completion: %d %s", status, p.Text(`document.body.textContent`))
	}
	if r := e.do("GET", "/connect/tariff/token?connect_token="+tok, nil); r.Status != 404 {
		t.Errorf("second exchange: %d %s", r.Status, r.Body)
	}

	// A second customer chooses the account's tariff as a template.
	tok2, path2 := e.token("HOME-2")
	if status := p.Load(chromedp.Navigate(e.api.URL + path2)); status != 200 {
		t.Fatalf("second page: %d", status)
	}
	// The account's two schedule tariffs (the first session's, and requireSameAsAPI's).
	options := kbrowser.Eval[[]string](p.Tab, `[...document.querySelectorAll("#template option")].map((o) => o.value + " " + o.textContent)`)
	if len(options) != 3 || !slices.Contains(options, ex.TariffID+" Two rates") {
		t.Fatalf("templates offered: %q", options)
	}
	p.Run(chromedp.SetValue(chromedp.ID("template"), ex.TariffID))
	p.fill(url.Values{"display_name": {"Two rates"}, "contract_start": {"2024-01-01"}, "contract_end": {"2030-01-01"}})
	p.Screenshot("template")
	if status := p.save(); status != 200 {
		t.Fatalf("save with a template: %d %q", status, p.problem())
	}
	ex2 := e.exchange(tok2)
	if ex2.LocationID == ex.LocationID {
		t.Fatalf("both sessions at %s", ex.LocationID)
	}
	e.requireSameAsAPI(ex2.TariffID, ex2.LocationID, "Two rates", twoRateHours())
}

// exchanged is GET /connect/tariff/token's answer.
type exchanged struct {
	LocationID          string `json:"location_id"`
	LocationReferenceID string `json:"location_reference_id"`
	TariffID            string `json:"tariff_id"`
	IsTariffProcessed   bool   `json:"is_tariff_processed"`
}

// exchange exchanges a completed token (the answer is checked against FlatPeak's document).
func (e *connectEnv) exchange(tok string) exchanged {
	e.t.Helper()
	r := e.do("GET", "/connect/tariff/token?connect_token="+tok, nil)
	var ex exchanged
	r.JSON(e.t, &ex)
	if r.Status != 200 || !ex.IsTariffProcessed || ex.TariffID == "" || ex.LocationID == "" {
		e.t.Fatalf("exchange: %d %s", r.Status, r.Body)
	}
	return ex
}
