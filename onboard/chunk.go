package onboard

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/tariffs"
)

// flush stores the chunk's good rows as one write and rejects the others.
func (l *loader) flush(ctx context.Context) error {
	chunk := l.chunk
	l.chunk = l.chunk[:0:0]
	if len(chunk) == 0 {
		return nil
	}
	changes, stored, err := l.draft(ctx, chunk)
	if err != nil {
		return err
	}
	if len(changes) > 0 {
		err := catalog.Commit(ctx, l.im.Catalog.Docs(), l.scope, changes...)
		l.im.Tariffs.Committed(ctx, l.scope) // also after a failure: the write may have landed
		if err != nil {
			return fmt.Errorf("store rows %d–%d: %w", chunk[0].num, chunk[len(chunk)-1].num, err)
		}
	}
	l.done.Locations += int64(stored.locations)
	l.done.Tariffs += int64(stored.tariffs)
	if l.opt.Progress != nil {
		l.opt.Progress(l.done)
	}
	return nil
}

type counts struct{ locations, tariffs int }

// draft checks the chunk's rows and returns the changes of those that can be stored.
func (l *loader) draft(ctx context.Context, chunk []line) ([]catalog.Change, counts, error) {
	var n counts
	ins := make([]catalog.LocationInput, len(chunk))
	for i := range chunk {
		ins[i] = chunk[i].row.LocationInput
	}
	drafts, problems, release, err := l.im.Catalog.DraftLocations(ctx, l.scope, ins)
	if err != nil {
		return nil, n, err
	}
	defer release() // the reference ids stay claimed until the commit is over: flush's caller
	var changes []catalog.Change
	for i, ln := range chunk {
		err := ln.problem
		if err == nil {
			err = problems[i]
		}
		var tariffChanges []catalog.Change
		if err == nil {
			tariffChanges, err = l.im.Tariffs.DraftTariffs(ctx, l.scope, drafts[i].Location, l.tariffsOf(ln.row))
		}
		if err != nil {
			if !isRowProblem(err) {
				return nil, n, err
			}
			if err := l.skipOrReject(ln, err); err != nil {
				return nil, n, err
			}
			continue
		}
		changes = append(changes, drafts[i].Change)
		changes = append(changes, tariffChanges...)
		n.locations++
		n.tariffs += len(tariffChanges)
	}
	return changes, n, nil
}

func (l *loader) tariffsOf(r Row) []tariffs.Input {
	if r.Tariffs == nil {
		return l.opt.Tariffs
	}
	return *r.Tariffs
}

// skipOrReject skips a row whose reference_id a location stored before this load holds
// (an import run again), and rejects every other bad row.
func (l *loader) skipOrReject(ln line, err error) error {
	if e := kwhouse.AsError(err); e != nil && e.Code == "duplicate_reference_id" && !ln.refSeen {
		l.done.Existing++
		return nil
	}
	l.done.Failed++
	if l.opt.Rejects == nil {
		return nil
	}
	if err := l.opt.Rejects.Reject(ln.num, ln.original, reason(err)); err != nil {
		return fmt.Errorf("write reject: %w", err)
	}
	return nil
}

// isRowProblem tells a row's own problem from a store failure, which stops the load.
func isRowProblem(err error) bool {
	switch kwhouse.KindOf(err) {
	case kwhouse.KindInvalid, kwhouse.KindConflict, kwhouse.KindNotFound, kwhouse.KindTooLarge, kwhouse.KindUnprocessable:
		return true
	}
	return false
}

// reason is a row's problem as a reject file says it: "param: message (code)", with the
// param of a tariff's problem under tariffs[i].
func reason(err error) string {
	prefix := ""
	var ie *tariffs.IndexedError
	if errors.As(err, &ie) {
		prefix, err = fmt.Sprintf("tariffs[%d].", ie.Index), ie.Err
	}
	e := kwhouse.AsError(err)
	if e == nil {
		return prefix + err.Error()
	}
	param := prefix + e.Param
	switch {
	case e.Param == "" && prefix != "":
		param = strings.TrimSuffix(prefix, ".")
	case e.Param == "":
		param = "row"
	}
	return fmt.Sprintf("%s: %s (%s)", param, e.Message, e.Code)
}
