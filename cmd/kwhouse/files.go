package main

import (
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/kwhouse/kwhouse/ingest"
)

// bulkFile is one file of a bulk command (ingest, import) being loaded: its rows, its
// reject file and its progress bar.
type bulkFile struct {
	csv     bool
	r       io.Reader
	rejects *lazyRejects
	prog    *progress
}

// tally is what the load of one file did: rows read and failed, and its summary.
type tally struct {
	rows, failed int64
	summary      string
}

// loadBulkFile opens file (its format from formatFlag or its name), has load read it,
// then prints load's summary with the time and rate, and where the failed rows went.
func loadBulkFile(file, formatFlag, rejectsFlag string, out io.Writer, log *slog.Logger,
	load func(f *bulkFile) (tally, error)) (tally, error) {
	csvFormat, err := isCSV(file, formatFlag)
	if err != nil {
		return tally{}, err
	}
	in, err := openInput(file, out, log)
	if err != nil {
		return tally{}, err
	}
	defer in.close()
	rejects, closeRejects := openRejects(file, rejectsFlag, csvFormat)
	start := time.Now()
	t, err := load(&bulkFile{csv: csvFormat, r: in.r, rejects: rejects, prog: in.prog})
	closeRejects()
	in.prog.finish()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(out, "%s: %s, %.1f s (%.0f rows/s)\n", file, t.summary, secs, float64(t.rows)/secs)
	if t.failed > 0 {
		fmt.Fprintf(out, "%s: failed rows and reasons are in %s\n", file, rejectsName(file, rejectsFlag, csvFormat))
	}
	return t, err
}

// inputFile is a bulk file being read (ingest, import): gunzipped when named .gz, with a
// progress bar on the bytes read.
type inputFile struct {
	r     io.Reader
	prog  *progress
	close func()
}

func openInput(file string, out io.Writer, log *slog.Logger) (*inputFile, error) {
	in, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", file, err)
	}
	st, err := in.Stat()
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("stat %s: %w", file, err)
	}
	prog := newProgress(file, st.Size(), out, log)
	pr := progressbar.NewReader(in, prog.bar)
	f := &inputFile{r: &pr, prog: prog, close: func() { in.Close() }}
	if strings.HasSuffix(file, ".gz") {
		zr, err := gzip.NewReader(f.r)
		if err != nil {
			in.Close()
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		f.r, f.close = zr, func() { zr.Close(); in.Close() }
	}
	return f, nil
}

// isCSV tells a CSV file from an NDJSON one by the --format flag or the file's name.
func isCSV(file, flag string) (bool, error) {
	name := strings.TrimSuffix(strings.ToLower(file), ".gz")
	switch {
	case flag == "csv" || (flag == "" && strings.HasSuffix(name, ".csv")):
		return true, nil
	case flag == "ndjson" || (flag == "" && (strings.HasSuffix(name, ".ndjson") || strings.HasSuffix(name, ".jsonl"))):
		return false, nil
	}
	return false, fmt.Errorf("%s: cannot tell the format; name it .csv, .ndjson or .jsonl, or pass --format", file)
}

func rejectsName(file, flag string, csvFormat bool) string {
	if flag != "" {
		return flag
	}
	if csvFormat {
		return file + ".rejects.csv"
	}
	return file + ".rejects.ndjson"
}

// openRejects creates the reject file lazily: a clean load leaves none behind.
func openRejects(file, flag string, csvFormat bool) (*lazyRejects, func()) {
	lr := &lazyRejects{name: rejectsName(file, flag, csvFormat), csv: csvFormat}
	return lr, lr.close
}

// lazyRejects writes rejected rows with their line and reason: CSV rows as
// "line,error,row", NDJSON lines as {"line","error","record"} objects.
type lazyRejects struct {
	name string
	csv  bool
	f    *os.File
	w    ingest.RejectWriter
}

// Reject writes one rejected row.
func (l *lazyRejects) Reject(line int, original, reason string) error {
	if l.w == nil {
		f, err := os.Create(l.name)
		if err != nil {
			return err
		}
		l.f = f
		if l.csv {
			cw := csv.NewWriter(f)
			if err := cw.Write([]string{"line", "error", "row"}); err != nil {
				return err
			}
			l.w = ingest.CSVRejects{W: cw}
		} else {
			l.w = ingest.NDJSONRejects{W: f}
		}
	}
	return l.w.Reject(line, original, reason)
}

func (l *lazyRejects) close() {
	if l.f != nil {
		l.f.Close()
	}
}

// progress draws a bar (bytes read, rows, rows/s, ETA) on a terminal, or logs a line
// every few seconds otherwise.
type progress struct {
	bar     *progressbar.ProgressBar
	file    string
	log     *slog.Logger
	tty     bool
	start   time.Time
	lastLog time.Time
}

func newProgress(file string, size int64, out io.Writer, log *slog.Logger) *progress {
	tty := false
	if f, ok := out.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	bar := progressbar.NewOptions64(size, progressbar.OptionSetWriter(out), progressbar.OptionSetVisibility(tty),
		progressbar.OptionShowBytes(true), progressbar.OptionSetPredictTime(true), progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetDescription(file))
	return &progress{bar: bar, file: file, log: log, tty: tty, start: time.Now(), lastLog: time.Now()}
}

func (p *progress) update(rows, accepted, failed int64) {
	rate := float64(rows) / time.Since(p.start).Seconds()
	p.bar.Describe(fmt.Sprintf("%s: %d rows (%.0f/s, %d failed)", p.file, rows, rate, failed))
	if !p.tty && time.Since(p.lastLog) > 5*time.Second {
		p.lastLog = time.Now()
		p.log.Info("progress", "file", p.file, "rows", rows, "accepted", accepted, "failed", failed, "rows_per_s", int(rate))
	}
}

func (p *progress) finish() {
	_ = p.bar.Finish()
	if p.tty {
		fmt.Fprintln(os.Stderr)
	}
}
