package ingest

import (
	"github.com/kwhouse/kwhouse"
)

// Rows are records in columns, as the insert sends them.
type Rows struct {
	account, location, device, session, recordRef, batch []string
	live                                                 []uint8
	direction, tariffRate                                []int8
	start, end                                           []int64
	energy, confidence                                   []float64
	version                                              []uint64
}

// newRows returns empty Rows with room for n rows, so that adding them does not regrow
// fourteen slices.
func newRows(n int) *Rows {
	return &Rows{
		account: make([]string, 0, n), location: make([]string, 0, n), device: make([]string, 0, n),
		session: make([]string, 0, n), recordRef: make([]string, 0, n), batch: make([]string, 0, n),
		live: make([]uint8, 0, n), direction: make([]int8, 0, n), tariffRate: make([]int8, 0, n),
		start: make([]int64, 0, n), end: make([]int64, 0, n), energy: make([]float64, 0, n),
		confidence: make([]float64, 0, n), version: make([]uint64, 0, n),
	}
}

// Len is the number of rows.
func (r *Rows) Len() int { return len(r.version) }

func (r *Rows) add(scope kwhouse.Scope, rec *Record, batch string, version uint64) {
	live := scope.LiveByte()
	r.account = append(r.account, scope.AccountID)
	r.live = append(r.live, live)
	r.location = append(r.location, rec.LocationID)
	r.device = append(r.device, rec.DeviceID)
	r.direction = append(r.direction, rec.Direction)
	r.tariffRate = append(r.tariffRate, rec.TariffRate)
	r.start = append(r.start, rec.Start)
	r.end = append(r.end, rec.End)
	r.energy = append(r.energy, rec.EnergyWh)
	r.confidence = append(r.confidence, rec.Confidence)
	r.session = append(r.session, rec.SessionRef)
	r.recordRef = append(r.recordRef, rec.RecordRef)
	r.batch = append(r.batch, batch)
	r.version = append(r.version, version)
}

// slice returns rows [from, to) sharing storage with r.
func (r *Rows) slice(from, to int) *Rows {
	return &Rows{account: r.account[from:to], live: r.live[from:to], location: r.location[from:to],
		device: r.device[from:to], direction: r.direction[from:to], tariffRate: r.tariffRate[from:to],
		start: r.start[from:to], end: r.end[from:to], energy: r.energy[from:to], confidence: r.confidence[from:to],
		session: r.session[from:to], recordRef: r.recordRef[from:to], batch: r.batch[from:to], version: r.version[from:to]}
}
