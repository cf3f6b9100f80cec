package chstore

import (
	"fmt"
	"sort"
	"sync"
)

// Statement is one SQL text kwhouse sends, under a name that says what it does. Every
// statement of the service is registered at package init, so the conformance suite
// (`make test-modern`) can list them all and fail on one it never ran.
type Statement struct {
	Name string
	SQL  string
	// eventual: an insert acknowledged without the cluster's metadata quorum (quorum.go)
	eventual bool
}

// Eventual marks an INSERT statement into a metadata table that is acknowledged without
// the cluster's metadata quorum: rows other nodes may see a moment later, where the
// quorum's cost on every ingest flush is not worth it (docs/operations.md).
func (s Statement) Eventual() Statement {
	s.eventual = true
	registry.Lock()
	defer registry.Unlock()
	registry.byName[s.Name] = s
	return s
}

var registry = struct {
	sync.Mutex
	byName map[string]Statement
}{byName: map[string]Statement{}}

// Register declares a statement of the service. sql is its text, or for a statement built
// per call (templates, optional clauses) a representative form; With gives the final text.
// Registering a name twice panics: names identify statements in the conformance report.
func Register(name, sql string) Statement {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[name]; dup {
		panic(fmt.Sprintf("chstore: statement %q registered twice", name))
	}
	s := Statement{Name: name, SQL: sql}
	registry.byName[name] = s
	return s
}

// Statements returns every registered statement, sorted by name.
func Statements() []Statement {
	registry.Lock()
	defer registry.Unlock()
	out := make([]Statement, 0, len(registry.byName))
	for _, s := range registry.byName {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// With returns the statement with its final text for this call (same name).
func (s Statement) With(sql string) Statement {
	return Statement{Name: s.Name, SQL: sql, eventual: s.eventual}
}

// Tool wraps SQL sent by tests and benchmarks, never by the service: a test in this
// package fails when a service package uses it.
func Tool(sql string) Statement { return Statement{Name: "tool", SQL: sql} }
