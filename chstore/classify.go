package chstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/kwhouse/kwhouse"
)

// Server exception codes that mean "try again later" rather than "this query is wrong".
var retryableCodes = map[int32]bool{
	// A shard's replica killed while it answered: the node that sent it the query reports
	// that the reply ended early (seen on the local cluster when a node was killed mid-query).
	32:  true, // ATTEMPT_TO_READ_AFTER_EOF
	159: true, // TIMEOUT_EXCEEDED
	202: true, // TOO_MANY_SIMULTANEOUS_QUERIES
	209: true, // SOCKET_TIMEOUT
	210: true, // NETWORK_ERROR
	242: true, // TABLE_IS_READ_ONLY: a restarted replica before its ZooKeeper session is back
	241: true, // MEMORY_LIMIT_EXCEEDED
	252: true, // TOO_MANY_PARTS
	279: true, // ALL_CONNECTION_TRIES_FAILED: every replica of a shard is down
	// A cluster's metadata quorum (quorum.go), once its wait has run out.
	codeTooFewLiveReplicas: true,
	codeQuorumBusy:         true,
	codeReplicaBehind:      true,
	codeQuorumUnknown:      true,
}

// Classify wraps err as kwhouse's Unavailable when ClickHouse could not be reached or asks
// for a retry, so the API answers 503; anything else (a bad query, a bad value) stays an
// internal error.
func Classify(err error) error {
	if err == nil || kwhouse.AsError(err) != nil {
		return err
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		if retryableCodes[ex.Code] || replicaNotActive(ex) {
			return kwhouse.Unavailable("ClickHouse", err)
		}
		return err
	}
	if connectionFailure(err) {
		return kwhouse.Unavailable("ClickHouse", err)
	}
	return err
}

// replicaNotActive: READONLY (164) thrown by an insert into a replica whose replication
// has not restarted yet (a node killed and started again within its ZooKeeper session, on
// the local cluster). The same code for a user set read-only stays an internal error.
func replicaNotActive(ex *clickhouse.Exception) bool {
	return ex.Code == 164 && strings.Contains(ex.Message, "Replica is not active")
}

func connectionFailure(err error) bool {
	var netErr net.Error
	switch {
	case errors.As(err, &netErr),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, driver.ErrBadConn),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, clickhouse.ErrAcquireConnTimeout),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return false
}
