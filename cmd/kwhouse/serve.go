package main

import (
	"github.com/spf13/cobra"

	"github.com/kwhouse/kwhouse/app"
)

func (c *cli) serveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Apply the schema and serve the API until SIGINT or SIGTERM",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, log, err := c.load()
			if err != nil {
				return err
			}
			a, err := app.New(cmd.Context(), cfg, log, app.Options{})
			if err != nil {
				return err
			}
			defer a.Close()
			addr, err := a.Listen()
			if err != nil {
				return err
			}
			log.Info("kwhouse serving", "addr", addr, "clickhouse", cfg.ClickHouse.Addr,
				"database", cfg.ClickHouse.Database, "redis", cfg.Redis.Addr)
			if err := a.Serve(cmd.Context()); err != nil {
				return err
			}
			log.Info("kwhouse stopped")
			return nil
		},
	}
	cmd.Flags().String("http-addr", "", "listen address (KWHOUSE_HTTP_ADDR), default :8080")
	bind(c.v, cmd, map[string]string{"http.addr": "http-addr"})
	return cmd
}
