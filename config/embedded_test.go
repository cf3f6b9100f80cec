package config_test

import (
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/config"
)

func TestEmbeddedDirSelectsEmbeddedModeAndRefusesACluster(t *testing.T) {
	t.Setenv("KWHOUSE_AUTH_JWT_SECRET", secret)
	cfg, err := config.Load(config.New(), "")
	if err != nil || cfg.Embedded.Dir != "" {
		t.Fatalf("default: dir %q, err %v; want server mode", cfg.Embedded.Dir, err)
	}
	t.Setenv("KWHOUSE_EMBEDDED_DIR", "/tmp/kw")
	if cfg, err = config.Load(config.New(), ""); err != nil || cfg.Embedded.Dir != "/tmp/kw" {
		t.Fatalf("KWHOUSE_EMBEDDED_DIR: dir %q, err %v", cfg.Embedded.Dir, err)
	}
	t.Setenv("KWHOUSE_CLICKHOUSE_CLUSTER", "kw")
	_, err = config.Load(config.New(), "")
	if err == nil || !strings.Contains(err.Error(), "embedded.dir") {
		t.Fatalf("embedded with a cluster: %v, want an error naming embedded.dir", err)
	}
}
