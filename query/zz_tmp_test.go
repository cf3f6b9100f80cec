package query_test

import (
	"testing"

	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/testkit/apitest"
)

func TestTmpPaged(t *testing.T) {
	f := newBucketFleetWith(t, apitest.Options{Configure: answerCacheOn})
	for walk := 0; walk < 3; walk++ {
		cursor := ""
		for {
			body := map[string]any{"start_time": "2024-03-01T00:00:00Z", "end_time": "2024-03-06T00:00:00Z", "aggregation": "DAY", "limit": 3}
			if cursor != "" {
				body["starting_after"] = cursor
			}
			p := askPage[bucketRow](f, body)
			query.WaitAnswerStores(f.api.App.Pricer)
			t.Logf("walk %d page %d rows, %+v", walk, len(p.Data), f.api.App.Pricer.AnswerCounts())
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
	}
}
