package main

import (
	"context"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/app"
)

// marked runs write, an insert of what a fleet answer's token counts made straight into
// ClickHouse, between the write marks of scope, as the service's writers do (docs/costs.md,
// "Write marks"): without them the answer cache would serve answers from before it.
func marked(ctx context.Context, a *app.App, scope kwhouse.Scope, write func() error) error {
	return a.Marks.Around(ctx, []kwhouse.Scope{scope}, write)
}
