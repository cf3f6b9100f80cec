package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/demo"
)

type demoFlags struct {
	key, data, url, dashboard string
}

func (c *cli) demoCmd() *cobra.Command {
	f := &demoFlags{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Load a small demo fleet (real prices and readings from --data) into an account; prints the dashboard's link",
		Long: `Creates four locations with their tariffs (London on Octopus Agile market prices, on a
two-rate and on a flat tariff; a Sydney home with solar export) and six weeks of their
half-hourly readings, all through the API: a kwhouse started inside this command on
loopback, or the one at --url. Files missing from --data leave their locations out;
demo locations the account already has are left as they are (docs/dashboard.md).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !strings.HasPrefix(f.key, "sk_") {
				return fmt.Errorf("--key must be an API key (sk_test_… or sk_live_…)")
			}
			fleet, missing, err := demo.ReadDir(f.data, demo.Window[0], demo.Window[1])
			if err != nil {
				return fmt.Errorf("demo data: %w", err)
			}
			out := cmd.ErrOrStderr()
			for _, m := range missing {
				fmt.Fprintf(out, "demo: %s is not in %s; the locations that need it are left out\n", m, f.data)
			}
			link, err := c.loadDemo(cmd.Context(), f, fleet, out)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), link)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.key, "key", "", "API key of the account to load into (required)")
	cmd.Flags().StringVar(&f.data, "data", "../shared/data", "directory of the public data files")
	cmd.Flags().StringVar(&f.url, "url", "", "a running kwhouse's base URL (default: start one inside this command)")
	cmd.Flags().StringVar(&f.dashboard, "dashboard", "http://localhost:8080/dashboard", "the dashboard address printed at the end")
	_ = cmd.MarkFlagRequired("key")
	return cmd
}

// loadDemo sends the fleet to f.url, or to a kwhouse it starts on loopback for the purpose,
// reports on out, and returns the dashboard's link (with the key, over the demo's window).
func (c *cli) loadDemo(ctx context.Context, f *demoFlags, fleet demo.Fleet, out io.Writer) (string, error) {
	client := &demo.Client{Base: f.url, Key: f.key, HTTP: &http.Client{Timeout: 2 * time.Minute}}
	if f.url == "" {
		stop, base, err := c.startLoopback(ctx)
		if err != nil {
			return "", err
		}
		defer stop()
		client.Base = base
	}
	loaded, err := demo.Load(ctx, client, fleet)
	switch {
	case errors.Is(err, demo.ErrLoaded):
		fmt.Fprintln(out, "demo: the account already has the demo fleet")
	case err != nil:
		return "", err
	case len(loaded.Locations) == 0:
		fmt.Fprintln(out, "demo: no data files found, nothing loaded")
		return f.dashboard + "#key=" + f.key, nil
	default:
		fmt.Fprintf(out, "demo: %d locations, %d readings loaded\n", len(loaded.Locations), loaded.Readings)
	}
	return fmt.Sprintf("%s?from=%s&to=%s#key=%s", f.dashboard,
		demo.Window[0].Format(time.DateOnly), demo.Window[1].Format(time.DateOnly), f.key), nil
}

// startLoopback serves the API on a free loopback port until stop is called. It signs no
// tokens, so a missing auth.jwt_secret is replaced by a random one.
func (c *cli) startLoopback(ctx context.Context) (stop func(), base string, err error) {
	cfg, log, err := c.load(false)
	if err != nil {
		return nil, "", err
	}
	if cfg.Auth.JWTSecret == "" {
		cfg.Auth.JWTSecret = randomSecret()
	}
	cfg.HTTP.Addr = "127.0.0.1:0"
	log = log.With("in", "demo")
	return serveLoopback(ctx, cfg, log, c.options())
}

func serveLoopback(ctx context.Context, cfg *config.Config, log *slog.Logger, opt app.Options) (func(), string, error) {
	a, err := app.New(ctx, cfg, log, opt)
	if err != nil {
		return nil, "", err
	}
	addr, err := a.Listen()
	if err != nil {
		a.Close()
		return nil, "", err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = a.Serve(sctx); close(done) }()
	return func() { cancel(); <-done; a.Close() }, "http://" + addr, nil
}

func randomSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
