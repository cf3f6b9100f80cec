package main

import (
	"github.com/spf13/cobra"

	"github.com/kwhouse/kwhouse/app"
)

func (c *cli) migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create the database if missing and apply pending schema migrations",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, log, err := c.load(false)
			if err != nil {
				return err
			}
			db, err := c.openDB(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer db.Close()
			if err := app.Migrate(cmd.Context(), cfg, db, log); err != nil {
				return err
			}
			log.Info("schema up to date", "database", cfg.ClickHouse.Database)
			return nil
		},
	}
}
