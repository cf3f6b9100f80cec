package main

import (
	"log/slog"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/kwhouse/kwhouse/app"
)

func (c *cli) serveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Apply the schema and serve the API until SIGINT or SIGTERM",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, log, err := c.load(true)
			if err != nil {
				return err
			}
			a, err := app.New(cmd.Context(), cfg, log, c.options())
			if err != nil {
				return err
			}
			defer a.Close()
			addr, err := a.Listen()
			if err != nil {
				return err
			}
			if cfg.HTTP.PprofAddr != "" {
				go servePprof(cfg.HTTP.PprofAddr, log)
			}
			if c.emb != nil {
				log.Info("kwhouse serving, embedded", "addr", addr, "dir", c.emb.Dir, "database", cfg.ClickHouse.Database)
			} else {
				log.Info("kwhouse serving", "addr", addr, "clickhouse", cfg.ClickHouse.Addr,
					"database", cfg.ClickHouse.Database, "redis", cfg.Redis.Addr)
			}
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

// servePprof serves the Go profiler on its own listener, never on the API's.
func servePprof(addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/heap", pprof.Index)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Info("pprof serving", "addr", addr)
	if err := srv.ListenAndServe(); err != nil {
		log.Warn("pprof stopped", "err", err)
	}
}
