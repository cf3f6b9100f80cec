package testkit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Images used where a Docker engine runs; the ClickHouse one matches docker-compose.yml.
const (
	ClickHouseImage = "clickhouse/clickhouse-server:26.3"
	RedisImage      = "redis:7-alpine"
)

// startContainers starts ClickHouse and Redis once per test binary with testcontainers.
// Without a Docker engine it fails the test with the way to give addresses instead.
func startContainers(t testing.TB) {
	t.Helper()
	containersOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		containerCH, containerErr = startContainer(ctx, ClickHouseImage, "9000/tcp",
			map[string]string{"CLICKHOUSE_SKIP_USER_SETUP": "1"})
		if containerErr == nil {
			containerRedis, containerErr = startContainer(ctx, RedisImage, "6379/tcp", nil)
		}
	})
	if containerErr != nil {
		t.Fatalf("no ClickHouse/Redis: set KWHOUSE_TEST_CLICKHOUSE_ADDR and KWHOUSE_TEST_REDIS_ADDR "+
			"(make test does), or run a Docker engine for testcontainers: %v", containerErr)
	}
}

// startContainer runs image and returns host:port of its exposed port. The container lives
// until the test binary exits (testcontainers' reaper removes it).
func startContainer(ctx context.Context, image, port string, env map[string]string) (string, error) {
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        image,
			ExposedPorts: []string{port},
			Env:          env,
			WaitingFor:   wait.ForListeningPort(port).WithStartupTimeout(2 * time.Minute),
		},
		Started: true,
	})
	if err != nil {
		return "", fmt.Errorf("start %s: %w", image, err)
	}
	host, err := c.Host(ctx)
	if err != nil {
		return "", fmt.Errorf("host of %s: %w", image, err)
	}
	mapped, err := c.MappedPort(ctx, port)
	if err != nil {
		return "", fmt.Errorf("port of %s: %w", image, err)
	}
	return fmt.Sprintf("%s:%s", host, mapped.Port()), nil
}
