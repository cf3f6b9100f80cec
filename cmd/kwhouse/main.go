// Command kwhouse is the kwhouse service and its tools: serve, migrate, accounts.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // the IANA database inside the binary: zones never depend on the host

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/embedded"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "kwhouse:", err)
		os.Exit(1) // ends the embedded stores too, and releases their directory
	}
}

// cli holds what every subcommand shares: the viper instance, the config file flag and,
// in embedded mode, the stores inside the process.
type cli struct {
	v    *viper.Viper
	file string
	emb  *embedded.Store
}

func newRoot() *cobra.Command {
	c := &cli{v: config.New()}
	root := &cobra.Command{
		Use:           "kwhouse",
		Short:         "Energy tariff, meter and cost service",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&c.file, "config", "", "config file (default: ./kwhouse.yaml or /etc/kwhouse/kwhouse.yaml when present)")
	root.PersistentFlags().String("clickhouse-addr", "", "ClickHouse native address host:port (KWHOUSE_CLICKHOUSE_ADDR)")
	root.PersistentFlags().String("clickhouse-database", "", "ClickHouse database, created if missing (KWHOUSE_CLICKHOUSE_DATABASE)")
	root.PersistentFlags().String("redis-addr", "", "Redis address host:port (KWHOUSE_REDIS_ADDR)")
	root.PersistentFlags().String("log-level", "", "debug, info, warn or error (KWHOUSE_LOG_LEVEL)")
	root.PersistentFlags().String("embedded", "", "embedded mode: ClickHouse and Redis inside this process, data in DIR (KWHOUSE_EMBEDDED_DIR)")
	bind(c.v, root, map[string]string{"clickhouse.addr": "clickhouse-addr", "clickhouse.database": "clickhouse-database",
		"redis.addr": "redis-addr", "log.level": "log-level", "embedded.dir": "embedded"})
	root.PersistentPostRunE = func(*cobra.Command, []string) error { return c.closeEmbedded() }
	root.AddCommand(c.serveCmd(), c.migrateCmd(), c.accountsCmd(), c.ingestCmd(), c.importCmd(), c.demoCmd())
	return root
}

// bind makes flags override env and file values, but only when they are set.
func bind(v *viper.Viper, cmd *cobra.Command, keys map[string]string) {
	for key, flag := range keys {
		f := cmd.PersistentFlags().Lookup(flag)
		if f == nil {
			f = cmd.Flags().Lookup(flag)
		}
		_ = v.BindPFlag(key, f) // fails only for a nil flag: the keys above name existing flags
	}
}

// load reads and validates the config and builds the logger. A command that serves no HTTP
// is not asked for the serving settings (auth.jwt_secret and the http.* keys).
func (c *cli) load(serving bool) (*config.Config, *slog.Logger, error) {
	load := config.LoadTool
	if serving {
		load = config.Load
	}
	cfg, err := load(c.v, c.file)
	if err != nil {
		return nil, nil, err
	}
	if err := c.openEmbedded(cfg); err != nil {
		return nil, nil, err
	}
	return cfg, newLogger(cfg.Log), nil
}

func newLogger(l config.Log) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(l.Level)) // validated by config
	opts := &slog.HandlerOptions{Level: lvl}
	if l.Format == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}
