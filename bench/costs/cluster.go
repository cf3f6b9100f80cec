package main

import (
	"github.com/kwhouse/kwhouse/app"
)

// onEveryShard is statement verb applied to table, on the server or, on a cluster, to the
// table's local part on every node (`verb db.table_local ON CLUSTER name rest`): the
// Distributed table itself can be neither truncated nor optimized.
func onEveryShard(a *app.App, verb, table, rest string) string {
	c := a.Config.ClickHouse
	if c.Cluster == "" {
		return verb + " " + table + rest
	}
	return verb + " " + c.Database + "." + table + "_local ON CLUSTER " + c.Cluster + rest
}
