{{define "fleet_arrays"}}
-- Untiered fleet costs with no JOIN: the batch's distinct price timelines (locations on
-- one product share one; see cost_arrays.sql for the layout of a timeline) arrive as
-- constant arrays, concatenated: timeline tl's bucket index starts at (tl - 1) × @nb.
-- Each record finds its location's timeline with transform and is priced as in
-- cost_arrays.sql; records are summed per location, device and bucket.
WITH
    transform(loc, @act_loc, @tl, toUInt32(0)) AS tl,
    transform(loc, @act_loc, @act_bits, toUInt16(0)) AS act,
    toUInt32((tl - 1) * @nb + intDiv(rs - @t0, @bucket) + 1) AS b0,
    toUInt32((tl - 1) * @nb + intDiv(re - 1 - @t0, @bucket) + 1) AS b1
{{- range .Comps}}
    {{- template "arrays_component" .}}
{{- end}}
    {{- template "arrays_money"}}
SELECT loc, dev, {{template "fleet_key" .}} AS k,
    sum(e) AS energy, sum(m) AS money, sum(m_com) AS money_com, sum(m_non) AS money_non, min(conf) AS confidence,
    countIf(tr = 1) AS n_import, countIf(tr = 2) AS n_export
FROM
(
    -- The latest version of each reading of the window. For a large batch FINAL (every
    -- filter is on a key column): on 18.16 a 900-location month took 795 ms with FINAL's
    -- merge of sorted parts, 960 ms with argMax; 100 locations 466 against 168 ms.
    SELECT location_id AS loc, device_id AS dev, toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
{{- if .Final}}
        energy_wh AS e, confidence AS rc
{{- else}}
        argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc
{{- end}}
{{- range .Comps}}{{if .Present}}{{with .N}},
        -- The arrays enter as columns: see cost_arrays.sql.
        @s{{.}}_start AS s{{.}}_start, @s{{.}}_end AS s{{.}}_end, @s{{.}}_price AS s{{.}}_price,
        @s{{.}}_conf AS s{{.}}_conf, @s{{.}}_first AS s{{.}}_first, @s{{.}}_last AS s{{.}}_last
{{- end}}{{end}}{{end}}
    FROM meter_records {{if .Final}}FINAL{{end}}
    WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
        AND device_id {{if .Devices}}!={{else}}={{end}} ''
        AND direction = @dir AND start_time >= toDateTime(@w0) AND start_time < toDateTime(@w1)
{{- if not .Final}}
    GROUP BY location_id, device_id, direction, tariff_rate, start_time, end_time
{{- end}}
)
GROUP BY loc, dev, k
ORDER BY loc, dev, k
{{end}}
