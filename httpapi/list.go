package httpapi

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// Paging bounds of every list.
const (
	defaultLimit = 30
	maxLimit     = 100
)

// listBody is the envelope of every list response.
type listBody[T any] struct {
	Object  string `json:"object"`
	URL     string `json:"url"`
	HasMore bool   `json:"has_more"`
	Data    []T    `json:"data"`
}

func newList[T any](c *gin.Context, data []T, more bool) listBody[T] {
	if data == nil {
		data = []T{}
	}
	return listBody[T]{Object: "list", URL: c.Request.URL.Path, HasMore: more, Data: data}
}

// listQuery reads limit, the cursors and the filters a list allows.
func listQuery(c *gin.Context, cursorPrefix string, filters ...string) (catalog.ListQuery, error) {
	q := catalog.ListQuery{Limit: defaultLimit, Filters: map[string]string{}}
	if s, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLimit {
			return q, kwhouse.Invalid("invalid_limit", "limit", "limit must be a whole number from 1 to %d", maxLimit)
		}
		q.Limit = n
	}
	q.StartingAfter, q.EndingBefore = c.Query("starting_after"), c.Query("ending_before")
	if q.StartingAfter != "" && q.EndingBefore != "" {
		return q, kwhouse.Invalid("conflicting_cursors", "ending_before", "give starting_after or ending_before, not both")
	}
	for param, cur := range map[string]string{"starting_after": q.StartingAfter, "ending_before": q.EndingBefore} {
		if cur != "" && !kwhouse.ValidID(cursorPrefix, cur) {
			return q, kwhouse.Invalid("invalid_cursor", param, "%q is not an id of this list", cur)
		}
	}
	for _, name := range filters {
		if v, ok := c.GetQuery(name); ok {
			q.Filters[name] = v
		}
	}
	return q, nil
}
