// Package onboard loads fleets from files (kwhouse import): each row is a location with
// its tariffs, checked as POST /locations and POST /tariffs/elements check them and stored
// with the same events, a chunk of rows per write.
package onboard

import (
	"context"
	"io"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/tariffs"
)

// Row is one line of an import: the body of POST /locations plus the location's tariffs,
// each the body of POST /tariffs/elements without location_id.
type Row struct {
	catalog.LocationInput
	Tariffs *[]tariffs.Input `json:"tariffs"`
}

// Format is the layout of an import file.
type Format int

// Import file formats.
const (
	CSV Format = iota
	NDJSON
)

// Options tune Load.
type Options struct {
	ChunkRows int // rows stored per write (default 1,000)
	// Tariffs are given to every row that names none (no tariffs key or column): a fleet
	// on one tariff needs it written once.
	Tariffs  []tariffs.Input
	Rejects  RejectWriter   // where failed rows go, with the reason (may be nil)
	Progress func(Progress) // called after every chunk
}

// Progress is how far a load has got.
type Progress struct {
	Rows      int64 // rows read
	Locations int64 // locations created
	Tariffs   int64 // tariffs created
	Existing  int64 // rows skipped: their reference_id is already a location's
	Failed    int64 // rows rejected
}

// RejectWriter takes rows that were not stored.
type RejectWriter interface {
	Reject(line int, original, reason string) error
}

// Importer creates locations and tariffs in bulk.
type Importer struct {
	Catalog *catalog.Catalog
	Tariffs *tariffs.Service
}

// Load reads rows from r and creates their locations and tariffs. A row is stored whole or
// not at all. A row whose reference_id is already a location's is skipped, so a stopped
// import can be run again; other bad rows go to opt.Rejects. A store failure stops the load.
func (im *Importer) Load(ctx context.Context, scope kwhouse.Scope, r io.Reader, format Format, opt Options) (Progress, error) {
	if opt.ChunkRows <= 0 {
		opt.ChunkRows = 1000
	}
	l := &loader{im: im, scope: scope, opt: opt, seen: map[string]bool{}}
	var err error
	if format == CSV {
		err = readCSV(r, l.add(ctx))
	} else {
		err = readNDJSON(r, l.add(ctx))
	}
	if err == nil {
		err = l.flush(ctx)
	}
	return l.done, err
}

// line is a row as read, with the problem that keeps it from being stored, if any.
type line struct {
	num      int
	original string
	row      Row
	problem  error
	refSeen  bool // an earlier row of this load has the row's reference_id
}

type loader struct {
	im    *Importer
	scope kwhouse.Scope
	opt   Options
	chunk []line
	seen  map[string]bool // reference ids of this load's rows so far
	done  Progress
}

func (l *loader) add(ctx context.Context) func(line) error {
	return func(ln line) error {
		l.done.Rows++
		if ref := ln.row.ReferenceID; ref != nil && *ref != "" {
			ln.refSeen = l.seen[*ref]
			l.seen[*ref] = true
		}
		l.chunk = append(l.chunk, ln)
		if len(l.chunk) >= l.opt.ChunkRows {
			return l.flush(ctx)
		}
		return nil
	}
}
