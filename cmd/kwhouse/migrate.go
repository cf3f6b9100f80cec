package main

import (
	"github.com/spf13/cobra"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/chstore"
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
			db, err := chstore.Open(cmd.Context(), cfg.ClickHouse)
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
