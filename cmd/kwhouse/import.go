package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/onboard"
	"github.com/kwhouse/kwhouse/strictjson"
	"github.com/kwhouse/kwhouse/tariffs"
)

type importFlags struct {
	account string
	live    bool
	format  string
	rejects string
	tariff  string
	chunk   int
}

func (c *cli) importCmd() *cobra.Command {
	f := &importFlags{}
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Onboard a fleet: create locations with their tariffs from CSV or NDJSON files (.gz too)",
		Long: `Creates locations and their tariffs with the same checks and events as POST /locations
and POST /tariffs/elements, a thousand rows per write. An NDJSON line is a POST /locations
body with an optional "tariffs" array of POST /tariffs/elements bodies (without
location_id); CSV columns are listed in docs/import.md. --tariff gives every row without
tariffs of its own the same ones. A row is stored whole or not at all; bad rows go to a
reject file with the reason. Rows whose reference_id a location already has are skipped,
so an import that stopped can be run again.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			if !kwhouse.ValidID(kwhouse.PrefixAccount, f.account) {
				return fmt.Errorf("--account must be an account id (acc_…)")
			}
			template, err := readTariffTemplate(f.tariff)
			if err != nil {
				return err
			}
			cfg, log, err := c.load(false)
			if err != nil {
				return err
			}
			im, err := app.OpenImporter(cmd.Context(), cfg, log, c.options())
			if err != nil {
				return err
			}
			defer im.Close()
			scope := kwhouse.Scope{AccountID: f.account, LiveMode: f.live}
			for _, file := range files {
				if err := importFile(cmd.Context(), im.Import, scope, file, f, template, log, cmd.ErrOrStderr()); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.account, "account", "", "account id the locations belong to (required)")
	cmd.Flags().BoolVar(&f.live, "live", false, "create them in live mode (default: test mode)")
	cmd.Flags().StringVar(&f.format, "format", "", "csv or ndjson (default: from the file name)")
	cmd.Flags().StringVar(&f.rejects, "rejects", "", "reject file (default: FILE.rejects.csv / .ndjson)")
	cmd.Flags().StringVar(&f.tariff, "tariff", "", "JSON file with a tariff body (or an array of them) for rows without tariffs")
	cmd.Flags().IntVar(&f.chunk, "chunk", 1000, "rows per write")
	_ = cmd.MarkFlagRequired("account")
	return cmd
}

// readTariffTemplate reads --tariff: one POST /tariffs/elements body or an array of them.
func readTariffTemplate(file string) ([]tariffs.Input, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--tariff: %w", err)
	}
	var many []tariffs.Input
	if err := strictjson.Decode(b, &many); err == nil {
		return many, nil
	}
	var one tariffs.Input
	if err := strictjson.Decode(b, &one); err != nil {
		return nil, fmt.Errorf("--tariff %s: %w", file, err)
	}
	return []tariffs.Input{one}, nil
}

func importFile(ctx context.Context, im *onboard.Importer, scope kwhouse.Scope, file string, f *importFlags,
	template []tariffs.Input, log *slog.Logger, out io.Writer) error {
	t, err := loadBulkFile(file, f.format, f.rejects, out, log, func(bf *bulkFile) (tally, error) {
		format := onboard.NDJSON
		if bf.csv {
			format = onboard.CSV
		}
		done, err := im.Load(ctx, scope, bf.r, format, onboard.Options{ChunkRows: f.chunk, Tariffs: template, Rejects: bf.rejects,
			Progress: func(p onboard.Progress) { bf.prog.update(p.Rows, p.Locations, p.Failed) }})
		return tally{rows: done.Rows, failed: done.Failed, summary: fmt.Sprintf("%d locations and %d tariffs created, %d rows already there, %d failed",
			done.Locations, done.Tariffs, done.Existing, done.Failed)}, err
	})
	if err != nil {
		return fmt.Errorf("import %s (stopped after %d rows; importing it again skips the rows stored): %w", file, t.rows, err)
	}
	return nil
}
