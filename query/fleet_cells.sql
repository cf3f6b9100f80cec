{{define "fleet_row_hash"}}
{{- /* One stored row, every column a price depends on and its version: a bucket's rows
are the same exactly when the sums of their hashes are (sums wrap, in Go as in SQL). */ -}}
cityHash64(direction, tariff_rate, start_time, end_time, energy_wh, confidence, version)
{{- end}}

{{define "fleet_cells"}}
-- Fingerprints of the rows a fleet query would price, read as stored (as the undeduplicated
-- fleet queries read them), per bucket; for tiered locations, whose counters read both
-- directions from the tier lookback on, of both directions, and of the lookback. A cached
-- priced bucket is reused only while its fingerprints are the ones its pricing query read.
WITH toUInt32(start_time) AS rs
SELECT location_id AS loc, device_id AS dev,
{{- if .Tiered}}
    -- The lookback's rows as one bucket after every other (fleet_cache.go chains them).
    if(rs < @w0, toUInt32(4294967295), {{template "fleet_key" .}}) AS k,
{{- else}}
    {{template "fleet_key" .}} AS k,
{{- end}}
    sum({{template "fleet_row_hash"}}) AS fp
FROM meter_records
WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
    AND device_id {{if .Devices}}!={{else}}={{end}} ''
{{- if .Tiered}}
    AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
    AND toUInt32(start_time) >= transform(location_id, @act_loc, @lookbacks, toUInt32(0))
{{- else}}
    AND direction = @dir AND start_time >= toDateTime(@w0) AND start_time < toDateTime(@w1)
{{- end}}
GROUP BY loc, dev, k
{{end}}
