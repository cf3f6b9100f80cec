package main

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/ingest"
)

type ingestFlags struct {
	account string
	live    bool
	format  string
	rejects string
	chunk   int
}

func (c *cli) ingestCmd() *cobra.Command {
	f := &ingestFlags{}
	cmd := &cobra.Command{
		Use:   "ingest FILE...",
		Short: "Bulk-load interval meter records from CSV or NDJSON files (.gz too)",
		Long: `Loads interval records through the same validation and writer as PUT /meters/interval.
CSV files need a header row naming the record fields (see docs/ingest.md). Rows that fail
go to a reject file (FILE.rejects.csv or FILE.rejects.ndjson) with the reason.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			if !kwhouse.ValidID(kwhouse.PrefixAccount, f.account) {
				return fmt.Errorf("--account must be an account id (acc_…)")
			}
			cfg, log, err := c.load(false)
			if err != nil {
				return err
			}
			l, err := app.OpenLoader(cmd.Context(), cfg, log)
			if err != nil {
				return err
			}
			defer l.Close()
			scope := kwhouse.Scope{AccountID: f.account, LiveMode: f.live}
			for _, file := range files {
				if err := loadFile(cmd.Context(), l.Ingest, scope, file, f, log, cmd.ErrOrStderr()); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.account, "account", "", "account id the records belong to (required)")
	cmd.Flags().BoolVar(&f.live, "live", false, "load into live mode (default: test mode)")
	cmd.Flags().StringVar(&f.format, "format", "", "csv or ndjson (default: from the file name)")
	cmd.Flags().StringVar(&f.rejects, "rejects", "", "reject file (default: FILE.rejects.csv / .ndjson)")
	cmd.Flags().IntVar(&f.chunk, "chunk", 100_000, "records per write")
	_ = cmd.MarkFlagRequired("account")
	return cmd
}

func loadFile(ctx context.Context, svc *ingest.Service, scope kwhouse.Scope, file string, f *ingestFlags, log *slog.Logger, out io.Writer) error {
	format, err := fileFormat(file, f.format)
	if err != nil {
		return err
	}
	in, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("open %s: %w", file, err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", file, err)
	}
	prog := newProgress(file, st.Size(), out, log)
	pr := progressbar.NewReader(in, prog.bar)
	var r io.Reader = &pr
	if strings.HasSuffix(file, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		defer zr.Close()
		r = zr
	}
	rejects, closeRejects, err := openRejects(file, f.rejects, format)
	if err != nil {
		return err
	}
	start := time.Now()
	done, err := svc.Load(ctx, scope, r, format, ingest.BulkOptions{ChunkRecords: f.chunk, Rejects: rejects, Progress: prog.update})
	closeRejects()
	prog.finish()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(out, "%s: accepted %d, failed %d, %.1f s (%.0f rows/s)\n", file, done.Accepted, done.Failed, secs, float64(done.Rows)/secs)
	if done.Failed > 0 {
		fmt.Fprintf(out, "%s: failed rows and reasons are in %s\n", file, rejectsName(file, f.rejects, format))
	}
	if err != nil {
		return fmt.Errorf("load %s (stopped after %d rows; loading it again is safe): %w", file, done.Rows, err)
	}
	return nil
}

func fileFormat(file, flag string) (ingest.FileFormat, error) {
	name := strings.TrimSuffix(strings.ToLower(file), ".gz")
	switch {
	case flag == "csv" || (flag == "" && strings.HasSuffix(name, ".csv")):
		return ingest.FileCSV, nil
	case flag == "ndjson" || (flag == "" && (strings.HasSuffix(name, ".ndjson") || strings.HasSuffix(name, ".jsonl"))):
		return ingest.FileNDJSON, nil
	}
	return 0, fmt.Errorf("%s: cannot tell the format; name it .csv, .ndjson or .jsonl, or pass --format", file)
}

func rejectsName(file, flag string, format ingest.FileFormat) string {
	if flag != "" {
		return flag
	}
	if format == ingest.FileCSV {
		return file + ".rejects.csv"
	}
	return file + ".rejects.ndjson"
}

// openRejects creates the reject file lazily: a clean load leaves none behind.
func openRejects(file, flag string, format ingest.FileFormat) (ingest.RejectWriter, func(), error) {
	lr := &lazyRejects{name: rejectsName(file, flag, format), format: format}
	return lr, lr.close, nil
}

type lazyRejects struct {
	name   string
	format ingest.FileFormat
	f      *os.File
	w      ingest.RejectWriter
}

func (l *lazyRejects) Reject(line int, original, reason string) error {
	if l.w == nil {
		f, err := os.Create(l.name)
		if err != nil {
			return err
		}
		l.f = f
		if l.format == ingest.FileCSV {
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

func (p *progress) update(b ingest.BulkProgress) {
	rate := float64(b.Rows) / time.Since(p.start).Seconds()
	p.bar.Describe(fmt.Sprintf("%s: %d rows (%.0f/s, %d failed)", p.file, b.Rows, rate, b.Failed))
	if !p.tty && time.Since(p.lastLog) > 5*time.Second {
		p.lastLog = time.Now()
		p.log.Info("ingest progress", "file", p.file, "rows", b.Rows, "accepted", b.Accepted, "failed", b.Failed, "rows_per_s", int(rate))
	}
}

func (p *progress) finish() {
	_ = p.bar.Finish()
	if p.tty {
		fmt.Fprintln(os.Stderr)
	}
}
