package main

import (
	"context"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
	"github.com/kwhouse/kwhouse/embedded"
)

// openEmbedded starts the embedded stores when cfg selects embedded mode (embedded.dir):
// the command's Redis is then the one inside the process.
func (c *cli) openEmbedded(cfg *config.Config) error {
	if cfg.Embedded.Dir == "" || c.emb != nil {
		return nil
	}
	s, err := embedded.Open(cfg.Embedded.Dir, cfg.ClickHouse)
	if err != nil {
		return err
	}
	c.emb = s
	cfg.Redis.Addr = s.RedisAddr
	return nil
}

func (c *cli) closeEmbedded() error {
	if c.emb == nil {
		return nil
	}
	err := c.emb.Close()
	c.emb = nil
	return err
}

// options are the app's options of this command: the embedded ClickHouse, if any.
func (c *cli) options() app.Options {
	if c.emb == nil {
		return app.Options{}
	}
	return app.Options{DB: c.emb.DB}
}

// openDB opens the command's ClickHouse: the embedded one, or the server of cfg.
func (c *cli) openDB(ctx context.Context, cfg *config.Config) (*chstore.DB, error) {
	if c.emb != nil {
		return c.emb.DB, nil
	}
	return chstore.Open(ctx, cfg.ClickHouse)
}
