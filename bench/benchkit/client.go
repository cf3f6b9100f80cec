package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/config"
)

var client = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// Call sends body as JSON with the API key and decodes the answer into out (when not nil);
// a status of 300 or more is an error naming it ("status 503").
func Call(base, key, method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: status %d: %.200s", method, path, res.StatusCode, buf.String())
	}
	if out != nil {
		return json.Unmarshal(buf.Bytes(), out)
	}
	return nil
}

// DropDatabase drops cfg's database (on every node of its cluster): a benchmark starts
// from nothing.
func DropDatabase(ctx context.Context, cfg config.ClickHouse) error {
	c := cfg
	c.Database = "default"
	db, err := chstore.Open(ctx, c)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Exec(ctx, chstore.Tool(chstore.DropDatabaseSQL(cfg)))
}
