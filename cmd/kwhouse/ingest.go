package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

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
			l, err := app.OpenLoader(cmd.Context(), cfg, log, c.options())
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
	t, err := loadBulkFile(file, f.format, f.rejects, out, log, func(bf *bulkFile) (tally, error) {
		format := ingest.FileNDJSON
		if bf.csv {
			format = ingest.FileCSV
		}
		done, err := svc.Load(ctx, scope, bf.r, format, ingest.BulkOptions{ChunkRecords: f.chunk, Rejects: bf.rejects,
			Progress: func(b ingest.BulkProgress) { bf.prog.update(b.Rows, b.Accepted, b.Failed) }})
		return tally{rows: done.Rows, failed: done.Failed, summary: fmt.Sprintf("accepted %d, failed %d", done.Accepted, done.Failed)}, err
	})
	if err != nil {
		return fmt.Errorf("load %s (stopped after %d rows; loading it again is safe): %w", file, t.rows, err)
	}
	return nil
}
