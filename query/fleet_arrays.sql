{{define "fleet_arrays"}}
-- Untiered costs with no JOIN and two SELECT levels: 18.16 re-analyses nested subqueries
-- at every level above them, so each level and each JOIN stage cost 10–20 ms there. The
-- batch's distinct price timelines (locations on one product share one; cost_arrays.sql
-- has the layout of a timeline) arrive as constant arrays, concatenated: timeline tl's
-- bucket index starts at (tl - 1) × @nb. Each record finds its location's timeline with
-- its number (li, readings.sql) and is priced against the few segments it can touch; records are
-- summed per location, device and bucket. The per-record money is a WITH list, so the sums
-- need no third level.
WITH
    arrayElement(@tl, li) AS tl,
    toUInt32((tl - 1) * @nb + intDiv(rs - @t0, @bucket) + 1) AS b0,
    toUInt32((tl - 1) * @nb + intDiv(re - 1 - @t0, @bucket) + 1) AS b1
{{- range .Comps}}
    {{- template "arrays_component" .}}
{{- end}}
    {{- template "arrays_money"}}
SELECT {{template "fleet_group" .}}, {{template "fleet_key" .}},
    -- Every aggregate costs each record a call (a fleet month on 18.16: ~5 ms each), so a
    -- component no timeline has is summed as the constant it is, and which components have
    -- tariffs (part of the price key: one bit set per timeline, @tl_bits) is read of the
    -- group's timeline, not aggregated.
    sum(e) AS energy, sum(m_com) + {{.Summed 2 "sum(m_non)" "0."}} AS money, sum(m_com) AS money_com,
    {{.Summed 2 "sum(m_non)" "0."}} AS money_non,
    least({{template "arrays_confidence" .}}, {{.Uncovered "arrayElement(@tl_bits, tl)"}}) AS confidence,
    countIf(tr = 1) AS n_import, countIf(tr = 2) AS n_export, max(re) AS reach,
    {{template "fleet_dirty" .}}
FROM
(
    {{template "readings" .}}
)
GROUP BY {{template "fleet_group_by" .}}, k, kend, ktr
ORDER BY li, gdev, k, kend, ktr
{{end}}

{{define "fleet_dirty"}}
{{- /* Whether a group holds two rows of one reading: a reading's versions share start and
tariff rate, so two rows with one (start, rate) flag it (distinct readings that share both,
or whose starts are 2^30 s apart, flag it too, which costs a second query, never a wrong sum). */ -}}
{{- if .Dedup}}toUInt8(0){{else}}{{repeats "toUInt32(rs * 4 + tr)" ""}}{{end}} AS dirty
{{- end}}
