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
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
)

//go:embed migrations/*.sql
var files embed.FS

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
	text, err := render(path, string(raw), form)
	if err != nil {
		return Migration{}, err
	}
	return Migration{Version: v, Name: name, Statements: split(text)}, nil
}

func render(path, text string, form Form) (string, error) {
	onCluster := ""
	if form.Cluster != "" {
		onCluster = "ON CLUSTER " + form.Cluster
	}
	funcs := template.FuncMap{"engine": func(engine, arg string) string {
		return engineClause(form, engine, arg)
	}}
	t, err := template.New(path).Funcs(funcs).Parse(text)
	if err != nil {
		return "", fmt.Errorf("parse migration %s: %w", path, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, struct{ OnCluster string }{onCluster}); err != nil {
		return "", fmt.Errorf("render migration %s: %w", path, err)
	}
	return buf.String(), nil
}

// engineClause renders engine(arg) for a single node, or its Replicated form on a cluster.
func engineClause(form Form, engine, arg string) string {
	if form.Cluster == "" {
		if arg == "" {
			return engine
		}
		return engine + "(" + arg + ")"
	}
	args := "'/clickhouse/tables/{shard}/" + form.Database + "/{uuid}', '{replica}'"
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

// Apply runs every migration not yet recorded in schema_migrations, in order. Every
// statement is idempotent (IF NOT EXISTS), so a run cut short is safe to repeat.
func Apply(ctx context.Context, db *chstore.DB, log *slog.Logger) error {
	form := Form{Cluster: db.Cluster, Database: db.Database}
	migs, err := Migrations(form)
	if err != nil {
		return err
	}
	if err := ensureBookkeeping(ctx, db, form); err != nil {
		return err
	}
	done, err := applied(ctx, db)
	if err != nil {
		return err
	}
	for _, m := range migs {
		if done[m.Version] {
			continue
		}
		for i, stmt := range m.Statements {
			if err := db.Exec(ctx, migrationStmt.With(stmt)); err != nil {
				return chstore.Classify(fmt.Errorf("migration %04d_%s statement %d: %w", m.Version, m.Name, i+1, err))
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
		engineClause(form, "ReplacingMergeTree", "") + " ORDER BY version"
	if err := db.Exec(ctx, bookkeepingStmt.With(q)); err != nil {
		return chstore.Classify(fmt.Errorf("create schema_migrations: %w", err))
	}
	return nil
}

func applied(ctx context.Context, db *chstore.DB) (map[int]bool, error) {
	rows, err := db.Query(ctx, appliedStmt)
	if err != nil {
		return nil, chstore.Classify(fmt.Errorf("read schema_migrations: %w", err))
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
		return chstore.Classify(fmt.Errorf("record migration %d: %w", m.Version, err))
	}
	if err := batch.Append(uint32(m.Version), m.Name, time.Now().UTC()); err != nil {
		return fmt.Errorf("record migration %d: %w", m.Version, err)
	}
	if err := batch.Send(); err != nil {
		return chstore.Classify(fmt.Errorf("record migration %d: %w", m.Version, err))
	}
	return nil
}
