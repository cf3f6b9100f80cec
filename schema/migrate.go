// Package schema holds kwhouse's ClickHouse DDL as numbered, embedded migrations and the
// code that applies them. The single-node and cluster forms differ only in the templated
// pieces: ON CLUSTER and the table engines.
package schema

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
)

//go:embed migrations/*.sql
var files embed.FS

// viewsSQL defines the templates every migration may use (the views on meter_records).
//
//go:embed views.sql
var viewsSQL string

// Migration is one numbered DDL file.
type Migration struct {
	Version    int
	Name       string
	Statements []string
}

// Form selects the single-node or the cluster variant of the DDL.
type Form struct {
	Cluster  string // empty: single node
	Database string
}

// Migrations parses and renders every embedded migration for form, in version order.
func Migrations(form Form) ([]Migration, error) {
	entries, err := fs.Glob(files, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(entries)
	out := make([]Migration, 0, len(entries))
	for _, path := range entries {
		m, err := load(path, form)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && out[len(out)-1].Version >= m.Version {
			return nil, fmt.Errorf("migration %s: version %d repeats or goes backwards", path, m.Version)
		}
		out = append(out, m)
	}
	return out, nil
}

func load(path string, form Form) (Migration, error) {
	base := strings.TrimSuffix(strings.TrimPrefix(path, "migrations/"), ".sql")
	num, name, ok := strings.Cut(base, "_")
	v, err := strconv.Atoi(num)
	if !ok || err != nil {
		return Migration{}, fmt.Errorf("migration %s: name must be NNNN_name.sql", path)
	}
	raw, err := files.ReadFile(path)
	if err != nil {
		return Migration{}, fmt.Errorf("read migration %s: %w", path, err)
	}
	m := Migration{Version: v, Name: name}
	for _, stmt := range split(string(raw)) {
		text, err := render(path, stmt, form)
		if err != nil {
			return Migration{}, err
		}
		if strings.TrimSpace(text) != "" { // a cluster-only statement renders empty on one node
			m.Statements = append(m.Statements, text)
		}
	}
	return m, nil
}

// createTarget finds the table a CREATE TABLE statement makes, as written in the template.
var createTarget = regexp.MustCompile(`CREATE TABLE (?:IF NOT EXISTS )?(?:\{\{table "(\w+)"\}\}|(\w+))`)

// render fills one statement's template. On a cluster: ON CLUSTER, Replicated engines whose
// ZooKeeper path names the table (18.16 has no {uuid}), the local name of a sharded table
// and its Distributed table. On one node every cluster piece renders empty, so the
// single-node DDL of every applied migration is unchanged (TestSingleNodeDDLIsUnchanged).
func render(path, stmt string, form Form) (string, error) {
	onCluster := ""
	if form.Cluster != "" {
		onCluster = "ON CLUSTER " + form.Cluster
	}
	target := ""
	if m := createTarget.FindStringSubmatch(stmt); m != nil {
		target = localName(form, m[1]+m[2])
	}
	funcs := template.FuncMap{
		"engine":       func(engine, arg string) string { return engineClause(form, target, engine, arg) },
		"table":        func(name string) string { return localName(form, name) },
		"qualified":    func(name string) string { return qualifiedName(form, name) },
		"distributed":  func(name string) string { return distributedTable(form, name) },
		"day_weight":   chstore.DayWeight,
		"reach_months": chstore.ReachMonths,
	}
	t, err := template.New(path).Funcs(funcs).Parse(viewsSQL)
	if err != nil {
		return "", fmt.Errorf("parse views.sql: %w", err)
	}
	if t, err = t.Parse(stmt); err != nil {
		return "", fmt.Errorf("parse migration %s: %w", path, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, struct{ OnCluster string }{onCluster}); err != nil {
		return "", fmt.Errorf("render migration %s: %w", path, err)
	}
	return buf.String(), nil
}

// shardingKeys are the tables sharded across a cluster (chstore.ShardingKeys, which inserts
// consult too): every other table is metadata, replicated to every node.
var shardingKeys = chstore.ShardingKeys

// localName is a sharded table's per-shard table on a cluster ("<name>_local"), else name.
func localName(form Form, name string) string {
	if _, ok := shardingKeys[name]; ok && form.Cluster != "" {
		return name + "_local"
	}
	return name
}

// qualifiedName is name with the database on a cluster: ON CLUSTER resolves the source
// of CREATE TABLE … AS in the default database otherwise.
func qualifiedName(form Form, name string) string {
	if form.Cluster == "" {
		return name
	}
	return form.Database + "." + name
}

// distributedTable is the CREATE of a sharded table's Distributed table on a cluster, named
// as the table is on one node so every query reads and writes it unchanged; "" on one node.
func distributedTable(form Form, name string) string {
	key, ok := shardingKeys[name]
	if !ok || form.Cluster == "" {
		return ""
	}
	local := localName(form, name)
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s ON CLUSTER %s AS %s ENGINE = Distributed(%s, %s, %s, %s)",
		name, form.Cluster, qualifiedName(form, local), form.Cluster, form.Database, local, key)
}

// engineClause renders engine(arg) for a single node, or its Replicated form on a cluster:
// a sharded table's replicas are the nodes of its shard, every other table's are all nodes.
func engineClause(form Form, table, engine, arg string) string {
	if form.Cluster == "" {
		if arg == "" {
			return engine
		}
		return engine + "(" + arg + ")"
	}
	group := "all"
	for name := range shardingKeys {
		if table == localName(form, name) {
			group = "{shard}"
		}
	}
	args := "'/clickhouse/tables/" + group + "/" + form.Database + "/" + table + "', '{replica}'"
	if arg != "" {
		args += ", " + arg
	}
	return "Replicated" + engine + "(" + args + ")"
}

// split cuts a file into statements at semicolons that end a line; 18.16 takes one
// statement per query.
func split(text string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

var (
	migrationStmt   = chstore.Register("schema.migration", "CREATE TABLE IF NOT EXISTS … (one statement of a migration file)")
	bookkeepingStmt = chstore.Register("schema.bookkeeping", "CREATE TABLE IF NOT EXISTS schema_migrations …")
	appliedStmt     = chstore.Register("schema.applied", "SELECT DISTINCT version FROM schema_migrations")
	recordStmt      = chstore.Register("schema.record", "INSERT INTO schema_migrations (version, name, applied_at) VALUES")
)

// Apply runs every migration not yet recorded in schema_migrations, in order, and refuses
// (*TooNewError) a database migrated past what this kwhouse knows. Every statement is
// idempotent (IF NOT EXISTS), so a run cut short is safe to repeat. Apply takes no lock:
// servers migrate through ApplyLocked.
func Apply(ctx context.Context, db *chstore.DB, log *slog.Logger) error {
	pending, err := Pending(ctx, db)
	if err != nil {
		return err
	}
	for _, m := range pending {
		for i, stmt := range m.Statements {
			if err := db.Exec(ctx, migrationStmt.With(stmt)); err != nil {
				return fmt.Errorf("migration %04d_%s statement %d: %w", m.Version, m.Name, i+1, err)
			}
		}
		if err := record(ctx, db, m); err != nil {
			return err
		}
		log.Info("applied migration", "version", m.Version, "name", m.Name)
	}
	return nil
}

func ensureBookkeeping(ctx context.Context, db *chstore.DB, form Form) error {
	onCluster := ""
	if form.Cluster != "" {
		onCluster = "ON CLUSTER " + form.Cluster
	}
	q := "CREATE TABLE IF NOT EXISTS schema_migrations " + onCluster +
		" (version UInt32, name String, applied_at DateTime('UTC')) ENGINE = " +
		engineClause(form, "schema_migrations", "ReplacingMergeTree", "") + " ORDER BY version"
	if err := db.Exec(ctx, bookkeepingStmt.With(q)); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	return nil
}

func applied(ctx context.Context, db *chstore.DB) (map[int]bool, error) {
	rows, err := db.Query(ctx, appliedStmt)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	done := map[int]bool{}
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("scan schema_migrations: %w", err)
		}
		done[int(v)] = true
	}
	return done, rows.Err()
}

func record(ctx context.Context, db *chstore.DB, m Migration) error {
	batch, err := db.Insert(ctx, recordStmt)
	if err != nil {
		return fmt.Errorf("record migration %d: %w", m.Version, err)
	}
	if err := batch.Append(uint32(m.Version), m.Name, time.Now().UTC()); err != nil {
		return fmt.Errorf("record migration %d: %w", m.Version, err)
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("record migration %d: %w", m.Version, err)
	}
	return nil
}
