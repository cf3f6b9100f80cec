package dashboard_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	kbrowser "github.com/kwhouse/kwhouse/testkit/browser"
)

var httpClient = http.Client{Timeout: time.Minute}

// browser is a headless Chromium tab with the dashboard's own reads.
type browser struct {
	*kbrowser.Tab
	t *testing.T
}

func openBrowser(t *testing.T) *browser {
	return &browser{Tab: kbrowser.Open(t, "dashboard"), t: t}
}

// eval is the value of a JavaScript expression in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	return kbrowser.Eval[T](b.Tab, expr)
}

// waitFor waits until the page has finished drawing view ("fleet" or a location id).
func (b *browser) waitFor(view string) {
	b.t.Helper()
	began := time.Now()
	b.Run(chromedp.Poll[chromedp.Void](`document.body.dataset.state === "ready" && document.body.dataset.view === "`+view+`"`,
		chromedp.WithPollingTimeout(kbrowser.Step)))
	b.t.Logf("%s drawn in %v", view, time.Since(began).Round(time.Millisecond))
}

// row is a table row as the page shows it: its data-key and each cell's text.
type row struct {
	Key   string   `json:"key"`
	Cells []string `json:"cells"`
}

func (b *browser) table(id string) []row {
	b.t.Helper()
	return eval[[]row](b, `[...document.querySelectorAll("#`+id+` tbody tr")].map((tr) =>
		({key: tr.dataset.key, cells: [...tr.cells].map((td) => td.textContent)}))`)
}

// requireNoData fails unless the page shows only the key form: no view, table or chart.
func (b *browser) requireNoData(when string) {
	b.t.Helper()
	shown := eval[struct {
		MainHidden bool `json:"mainHidden"`
		FormHidden bool `json:"formHidden"`
		Tables     int  `json:"tables"`
		Charts     int  `json:"charts"`
		View       int  `json:"view"`
	}](b, `({mainHidden: document.getElementById("main").hidden, formHidden: document.getElementById("key-form").hidden,
		tables: document.querySelectorAll("table").length, charts: document.querySelectorAll("svg").length,
		view: document.getElementById("view").childElementCount})`)
	if !shown.MainHidden || shown.FormHidden || shown.Tables+shown.Charts+shown.View != 0 {
		b.t.Errorf("%s the page shows more than the key form: %+v", when, shown)
	}
}

// download clicks the element selector finds and returns the file the browser saved.
func (b *browser) download(selector string) []byte {
	b.t.Helper()
	dir := b.t.TempDir()
	ctx, cancel := context.WithTimeout(b.Context(), kbrowser.Step)
	defer cancel()
	progress := chromedp.Events(ctx, cdpbrowser.DownloadProgress)
	allow := true
	b.Run(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &allow})
		return err
	}), chromedp.Click(chromedp.CSS(selector)))
	for ev, err := range progress {
		if err != nil {
			b.t.Fatalf("download from %s: %v", selector, err)
		}
		if ev.State == cdpbrowser.DownloadProgressStateCompleted {
			body, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			if err != nil {
				b.t.Fatalf("download from %s: %v", selector, err)
			}
			return body
		}
	}
	b.t.Fatalf("download from %s: no file", selector)
	return nil
}
