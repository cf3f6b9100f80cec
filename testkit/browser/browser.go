// Package browser drives a headless Chromium through the DevTools protocol (chromedp) for
// the tests of kwhouse's own pages (the dashboard, the connect page). The binary is
// KWHOUSE_TEST_CHROMIUM or Debian's chromium on PATH (scripts/services.sh browser installs
// it); without one the test is skipped. Screenshots go to .artifacts/NAME at the
// repository's top.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Step is the longest one browser action (a page load, a wait for the page) may take: a
// page may ask for several cost queries one after another, on a loaded machine under -race.
const Step = 3 * time.Minute

// Tab is a headless Chromium tab, closed when its test ends.
type Tab struct {
	t   *testing.T
	ctx context.Context
	// Dir is where Screenshot writes.
	Dir string
}

// Binary is the Chromium to run, or skips the test when there is none.
func Binary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KWHOUSE_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH and KWHOUSE_TEST_CHROMIUM unset: install it with scripts/services.sh browser (apt-get install chromium)")
	return ""
}

// Open starts Chromium (Binary) with one tab; its screenshots go to .artifacts/name.
func Open(t *testing.T, name string) *Tab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Binary(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1100, 1400))
	// The browser lives as long as the context of its first action: the test's, not a step's.
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := &Tab{t: t, ctx: tab, Dir: artefacts(t, name)}
	t.Logf("screenshots in %s", b.Dir)
	return b
}

// Context is the tab's context, for chromedp calls the helpers here do not cover.
func (b *Tab) Context() context.Context { return b.ctx }

// Run runs actions, failing the test on an error.
func (b *Tab) Run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Step)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// Load runs actions that load a page (a navigation, a click on a form's submit button),
// waits until it has loaded and returns its HTTP status.
func (b *Tab) Load(actions ...chromedp.Action[chromedp.Void]) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Step)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, actions...)
	if err != nil {
		b.t.Fatalf("browser: %v", err)
	}
	return resp.Status
}

// Eval is the value of a JavaScript expression in the tab's page.
func Eval[T any](b *Tab, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Step)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("browser: %s: %v", expr, err)
	}
	return v
}

// Text is the string value of a JavaScript expression.
func (b *Tab) Text(expr string) string {
	b.t.Helper()
	return Eval[string](b, expr)
}

// Screenshot saves the whole page as name.png in Dir.
func (b *Tab) Screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Step)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(b.Dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
}

// artefacts is .artifacts/name at the repository's top (the directory holding go.mod).
func artefacts(t *testing.T, name string) string {
	dir, err := os.Getwd()
	for err == nil {
		if _, statErr := os.Stat(filepath.Join(dir, "go.mod")); statErr == nil {
			break
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
		} else {
			err = fmt.Errorf("no go.mod above the test's directory")
		}
	}
	if err == nil {
		dir = filepath.Join(dir, ".artifacts", name)
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Fatalf("artefact directory: %v", err)
	}
	return dir
}
