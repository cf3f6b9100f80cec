package carbon

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
)

// Intensity is one interval of a series as sent: grams CO2e per kWh over [start, end).
type Intensity struct {
	StartTime catalog.Timestamp `json:"start_time"`
	EndTime   catalog.Timestamp `json:"end_time"`
	Intensity *float64          `json:"intensity"`
}

// IntensitiesResult is the answer of PUT /carbon/series/{id}/intensities.
type IntensitiesResult struct {
	Object              string `json:"object"`
	SeriesID            string `json:"series_id"`
	IntensitiesAccepted int    `json:"intensities_accepted"`
}

// MaxIntensitiesPerRequest bounds one PUT (a year of 15-minute intensities fits).
const MaxIntensitiesPerRequest = 40_000

// IntensitiesBound stops reading a body of intensities at its first one too many (413).
var IntensitiesBound = catalog.SeriesBound("intensities", MaxIntensitiesPerRequest)

// maxInterval is how far before a window an interval may start and still reach into it.
const maxInterval = 32 * 86400

var insertStmt = chstore.Register("carbon.insert_intensities", `INSERT INTO carbon_intensities (account_id, live_mode,
		series_id, start_time, end_time, intensity, version) VALUES`)

// The latest intensity of each interval: a re-sent interval replaces the old one (argMax,
// not FINAL: end_time is not in the key).
var intervalsStmt = chstore.Register("carbon.intervals", `SELECT toUInt32(start_time),
		toUInt32(argMax(end_time, version)) AS e, argMax(intensity, version)
	FROM carbon_intensities
	WHERE account_id = ? AND live_mode = ? AND series_id = ? AND start_time >= toDateTime(?) AND start_time < toDateTime(?)
	GROUP BY start_time
	HAVING e > ?
	ORDER BY start_time`)

// PutIntensities stores intensities of a series; an interval with the start of a stored
// one replaces it.
func (s *Store) PutIntensities(ctx context.Context, scope kwhouse.Scope, id string, ivs []Intensity) (IntensitiesResult, error) {
	if _, err := s.Get(ctx, scope, id); err != nil {
		return IntensitiesResult{}, err
	}
	if err := checkIntensities(ivs); err != nil {
		return IntensitiesResult{}, err
	}
	ver, err := s.docs.Versions().Next(ctx, len(ivs))
	if err != nil {
		return IntensitiesResult{}, fmt.Errorf("versions of intensities: %w", err)
	}
	err = s.db.InsertRows(ctx, insertStmt, len(ivs), func(i int) []any {
		iv := ivs[i]
		return []any{scope.AccountID, scope.LiveByte(), id, iv.StartTime.Time().UTC(), iv.EndTime.Time().UTC(),
			*iv.Intensity, ver + uint64(i)}
	})
	if err != nil {
		return IntensitiesResult{}, fmt.Errorf("put intensities of %s: %w", id, err)
	}
	return IntensitiesResult{Object: "carbon_intensities", SeriesID: id, IntensitiesAccepted: len(ivs)}, nil
}

// checkIntensities reports every missing, negative, non-finite or overlapping interval;
// params name the index.
func checkIntensities(ivs []Intensity) error {
	return catalog.CheckSeries(len(ivs), catalog.Series{What: "intensities", Max: MaxIntensitiesPerRequest,
		// The reads look back this far for an interval reaching into a window.
		MaxSpan: maxInterval * time.Second,
		Item: func(i int, prefix string, p *kwhouse.Problems) catalog.Span {
			iv := ivs[i]
			switch {
			case iv.Intensity == nil:
				p.Add("parameter_missing", prefix+".intensity", "intensity is required")
			case !kwhouse.Within(*iv.Intensity, kwhouse.MaxIntensity) || *iv.Intensity < 0:
				p.Add("invalid_number", prefix+".intensity", "intensity must be a number from 0 to %g", kwhouse.MaxIntensity)
			}
			return catalog.Span{Start: iv.StartTime.Time(), End: iv.EndTime.Time()}
		}})
}

// Intervals returns the series' intervals in force during [from, to), in time order.
func (s *Store) Intervals(ctx context.Context, scope kwhouse.Scope, id string, from, to int64) ([]Interval, error) {
	if id == "" {
		return nil, nil
	}
	rows, err := s.db.Query(ctx, intervalsStmt, scope.AccountID, scope.LiveByte(), id,
		uint32(max(from-maxInterval, 0)), uint32(to), uint32(from))
	if err != nil {
		return nil, fmt.Errorf("intensities of %s: %w", id, err)
	}
	defer rows.Close()
	var out []Interval
	for rows.Next() {
		var s0, e0 uint32
		var iv Interval
		if err := rows.Scan(&s0, &e0, &iv.Intensity); err != nil {
			return nil, fmt.Errorf("scan intensity: %w", err)
		}
		iv.Start, iv.End = int64(s0), int64(e0)
		out = append(out, iv)
	}
	return out, rows.Err()
}
