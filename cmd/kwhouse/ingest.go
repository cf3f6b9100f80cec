package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

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
	csvFormat, err := isCSV(file, f.format)
	if err != nil {
		return err
	}
	format := ingest.FileNDJSON
	if csvFormat {
		format = ingest.FileCSV
	}
	in, err := openInput(file, out, log)
	if err != nil {
		return err
	}
	defer in.close()
	rejects, closeRejects := openRejects(file, f.rejects, csvFormat)
	start := time.Now()
	done, err := svc.Load(ctx, scope, in.r, format, ingest.BulkOptions{ChunkRecords: f.chunk, Rejects: rejects,
		Progress: func(b ingest.BulkProgress) { in.prog.update(b.Rows, b.Accepted, b.Failed) }})
	closeRejects()
	in.prog.finish()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(out, "%s: accepted %d, failed %d, %.1f s (%.0f rows/s)\n", file, done.Accepted, done.Failed, secs, float64(done.Rows)/secs)
	if done.Failed > 0 {
		fmt.Fprintf(out, "%s: failed rows and reasons are in %s\n", file, rejectsName(file, f.rejects, csvFormat))
	}
	if err != nil {
		return fmt.Errorf("load %s (stopped after %d rows; loading it again is safe): %w", file, done.Rows, err)
	}
	return nil
}
