{{define "fleet_arrays"}}
-- Untiered fleet costs with no JOIN: the batch's distinct price timelines (locations on
-- one product share one; see cost_arrays.sql for the layout of a timeline) arrive as
-- constant arrays, concatenated: timeline tl's bucket index starts at (tl - 1) × @nb.
-- Each record finds its location's timeline with transform and is priced as in
-- cost_arrays.sql; records are summed per location, device and bucket.
WITH
    transform(loc, @act_loc, @tl, toUInt32(0)) AS tl,
    -- Which components have tariffs is part of the price key: one bit set per timeline.
    arrayElement(@tl_bits, tl) AS act,
    toUInt32((tl - 1) * @nb + intDiv(rs - @t0, @bucket) + 1) AS b0,
    toUInt32((tl - 1) * @nb + intDiv(re - 1 - @t0, @bucket) + 1) AS b1
{{- range .Comps}}
    {{- template "arrays_component" .}}
{{- end}}
    {{- template "arrays_money"}}
SELECT loc, dev, {{template "fleet_key" .}} AS k,
    sum(e) AS energy, sum(m) AS money, sum(m_com) AS money_com, sum(m_non) AS money_non, min(conf) AS confidence,
    countIf(tr = 1) AS n_import, countIf(tr = 2) AS n_export, max(re) AS reach,
    {{template "fleet_dirty" .}}
FROM
(
    -- The readings of the window: {{template "fleet_dedup_note" .}}
    SELECT location_id AS loc, device_id AS dev, toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
{{- if eq .Dedup "argmax"}}
        argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc
{{- else}}
        energy_wh AS e, confidence AS rc
{{- end}}
{{- range .Comps}}{{if .Present}},
        -- The arrays enter as columns: see cost_arrays.sql.
        {{- template "arrays_columns" .}}
{{- end}}{{end}}
    FROM meter_records {{if eq .Dedup "final"}}FINAL{{end}}
    WHERE account_id = @account AND live_mode = @live AND location_id IN @locs
        AND device_id {{if .Devices}}!={{else}}={{end}} ''
        AND direction = @dir AND start_time >= toDateTime(@w0) AND start_time < toDateTime(@w1)
{{- if eq .Dedup "argmax"}}
    GROUP BY location_id, device_id, direction, tariff_rate, start_time, end_time
{{- end}}
)
GROUP BY loc, dev, k
ORDER BY loc, dev, k
{{end}}

{{define "fleet_dedup_note"}}
{{- if eq .Dedup "final"}}the latest version of each, by FINAL (every filter is on a key
    -- column; for large batches: on 18.16 a 900-location month took 795 ms with FINAL's merge
    -- of sorted parts, 960 ms with argMax; 100 locations 466 against 168 ms).
{{- else if eq .Dedup "argmax"}}the latest version of each, by argMax (small batches: see "final").
{{- else}}every stored version, undeduplicated: a reading sent twice
    -- and not yet merged is counted twice, which "dirty" reports (a fleet month read 568 ms
    -- with FINAL against 306 ms this way on 18.16). Go prices dirty locations again, deduplicated.
{{- end}}
{{- end}}

{{define "fleet_dirty"}}
{{- /* Whether a group holds two rows of one reading: a reading's versions share start and
tariff rate, so fewer distinct (start, rate) than rows flags it (distinct readings that share
both flag it too, which costs a second query, never a wrong sum). */ -}}
{{- if .Dedup}}toUInt8(0){{else}}toUInt8(count() != uniqExact(toUInt64(rs) * 4 + tr)){{end}} AS dirty
{{- end}}
