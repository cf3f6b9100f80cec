{{define "demand_readings"}}
-- The location-level readings of some locations in one direction starting in
-- [@lookback, @w1), one row per reading: the whole local months that demand charges are
-- measured over, for the months whose kept peaks are stale (demand_peaks.go). Plain rows,
-- not arrays per location: the driver decodes an array element by element through
-- reflection, which took most of the background pricer's CPU (docs/benchmarks.md).
-- The readings are the cost queries' own (readings.sql, with argMax: on 18.16 with five
-- accounts' years stored, a year of 1 location read in 0.2 s against 0.8–1.2 s with FINAL,
-- of 20 in 1.3 s against 4–6.6 s, of 100 in 2.9–4.2 s against 7.9–13.5 s); Go splits them
-- into local-clock intervals (docs/costs.md, "Bill charges"). A reading's location is its
-- number (its place in @act_loc): a year of one location's 17,568 readings scanned as ids
-- made as many strings in Go.
SELECT li, rs, re, e
FROM (
{{- template "readings" .}}
)
{{end}}
