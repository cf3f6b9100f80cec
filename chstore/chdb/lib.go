//go:build chdb

package chdb

/*
#cgo LDFLAGS: -lchdb
#include <stdlib.h>
#include <stddef.h>

// The subset of chdb.h (chDB's stable C API) this package calls.
typedef struct chdb_connection_ { void *internal_data; } *chdb_connection;
typedef struct chdb_result_ { void *internal_data; } chdb_result;
chdb_connection *chdb_connect(int argc, char **argv);
void chdb_close_conn(chdb_connection *conn);
chdb_result *chdb_query_n(chdb_connection conn, const char *query, size_t query_len, const char *format, size_t format_len);
void chdb_destroy_query_result(chdb_result *result);
char *chdb_result_buffer(chdb_result *result);
size_t chdb_result_length(chdb_result *result);
const char *chdb_result_error(chdb_result *result);

static chdb_connection *connect_path(char *path) {
	char *argv[] = {"clickhouse", path};
	return chdb_connect(2, argv);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// ErrQuery is wrapped by every error chDB reports for a statement.
var ErrQuery = errors.New("chdb query")

// conn is one chDB session; chDB allows one per process, and calls are serialised.
// current is the session's current database (USE), "" before the first.
type conn struct {
	mu      sync.Mutex
	c       *C.chdb_connection
	current string
}

func connect(path string) (*conn, error) {
	arg := C.CString("--path=" + path)
	defer C.free(unsafe.Pointer(arg))
	c := C.connect_path(arg)
	if c == nil || *c == nil {
		return nil, fmt.Errorf("chdb connect %s: failed", path)
	}
	return &conn{c: c}, nil
}

// run executes sql in database (the session's current one when "") and returns its
// output in format. The session has one current database: a statement of another one
// is preceded by a USE, under the same lock.
func (c *conn) run(database, sql, format string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil, fmt.Errorf("%w: connection closed", ErrQuery)
	}
	if database != "" && database != c.current {
		if _, err := c.query("USE "+database, "TabSeparated"); err != nil { // identifier from config
			return nil, err
		}
		c.current = database
	}
	return c.query(sql, format)
}

// query runs one statement; c.mu is held.
func (c *conn) query(sql, format string) ([]byte, error) {
	q, f := C.CString(sql), C.CString(format)
	defer C.free(unsafe.Pointer(q))
	defer C.free(unsafe.Pointer(f))
	r := C.chdb_query_n(*c.c, q, C.size_t(len(sql)), f, C.size_t(len(format)))
	if r == nil {
		return nil, fmt.Errorf("%w: no result", ErrQuery)
	}
	defer C.chdb_destroy_query_result(r)
	if e := C.chdb_result_error(r); e != nil {
		return nil, fmt.Errorf("%w: %s", ErrQuery, C.GoString(e))
	}
	n := C.chdb_result_length(r)
	if n == 0 {
		return nil, nil
	}
	return C.GoBytes(unsafe.Pointer(C.chdb_result_buffer(r)), C.int(n)), nil
}

func (c *conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c != nil {
		C.chdb_close_conn(c.c)
		c.c = nil
	}
}
