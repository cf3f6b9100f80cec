{{define "demand_readings"}}
-- The location-level readings of some locations in one direction starting in
-- [@lookback, @w1), one row of arrays per location: the whole local months that demand
-- charges are measured over. The readings are the cost queries' own (readings.sql, with
-- FINAL: on 18.16 the argMax GROUP BY of a 50-location year took 3.9–4.3 s); Go splits
-- them into local-clock intervals (docs/costs.md, "Bill charges").
SELECT loc, groupArray(rs) AS rss, groupArray(re) AS res, groupArray(e) AS es
FROM (
{{- template "readings" .}}
)
GROUP BY loc
{{end}}
