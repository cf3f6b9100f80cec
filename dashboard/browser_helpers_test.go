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
)

var httpClient = http.Client{Timeout: time.Minute}

// browser is a headless Chromium tab driven through the DevTools protocol.
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string
}

// step is the longest one browser action (a page load, a wait for the page) may take: a
// view asks for several cost queries one after another, on a loaded machine under -race.
const step = 3 * time.Minute

func openBrowser(t *testing.T, binary string) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(binary),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1100, 1400))
	// The browser lives as long as the context of its first action: the test's, not a step's.
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start %s: %v", binary, err)
	}
	b := &browser{t: t, ctx: tab, dir: artifacts(t)}
	t.Logf("screenshots in %s", b.dir)
	return b
}

func (b *browser) run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// eval is the value of a JavaScript expression in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("browser: %s: %v", expr, err)
	}
	return v
}

// waitFor waits until the page has finished drawing view ("fleet" or a location id).
func (b *browser) waitFor(view string) {
	b.t.Helper()
	began := time.Now()
	b.run(chromedp.Poll[chromedp.Void](`document.body.dataset.state === "ready" && document.body.dataset.view === "`+view+`"`,
		chromedp.WithPollingTimeout(step)))
	b.t.Logf("%s drawn in %v", view, time.Since(began).Round(time.Millisecond))
}

func (b *browser) text(expr string) string {
	b.t.Helper()
	return eval[string](b, expr)
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

// screenshot saves the whole page as name.png under the artefact directory.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
}

// download clicks the element selector finds and returns the file the browser saved.
func (b *browser) download(selector string) []byte {
	b.t.Helper()
	dir := b.t.TempDir()
	ctx, cancel := context.WithTimeout(b.ctx, step)
	defer cancel()
	progress := chromedp.Events(ctx, cdpbrowser.DownloadProgress)
	allow := true
	b.run(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
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
