{{define "cost_arrays"}}
-- Untiered costs in one read of the records, no JOIN and two SELECT levels: 18.16
-- re-analyses nested subqueries at every level above them, so each level and each JOIN
-- stage cost 10–20 ms there. Every component's price segments arrive as constant
-- arrays, sorted and disjoint, with a bucket index (first, last: 1-based segment numbers
-- per bucket of @bucket seconds from @t0) naming the few segments a record can touch.
-- The per-record money is a WITH list, so the daily sums need no third level.
WITH
    toUInt16({{.ActBits}}) AS act,
    toUInt32(intDiv(rs - @t0, @bucket) + 1) AS b0, toUInt32(intDiv(re - 1 - @t0, @bucket) + 1) AS b1
{{- range .Comps}}
    {{- template "arrays_component" .}}
{{- end}}
    {{- template "arrays_money"}}
SELECT {{template "cost_columns" .}}
FROM
(
{{- if .Instant}}
        -- The instant record, priced as if stored (without tiers, stored readings do not matter).
        SELECT toUInt32(@i_rs) AS rs, toUInt32(@i_re) AS re, toFloat64(@i_e) AS e, toFloat64(@i_rc) AS rc,
            toUInt8(@i_tr) AS tr, @i_sess AS sess, @i_ref AS ref
{{- else}}
        -- The latest version of each reading of the window (argMax, not FINAL: see cost_records.sql).
        SELECT toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
            toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
            argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc,
{{- if .Refs}}
            argMax(session_reference_id, version) AS sess, argMax(record_reference_id, version) AS ref
{{- else}}
            -- Daily sums show no references: two fewer columns to read in every day's part.
            '' AS sess, '' AS ref
{{- end}}
{{- end}}
{{- range .Comps}}{{if .Present}},
            -- The arrays enter as columns: 18.16 spells a literal out in the name of every
            -- expression built on it, and those names made analysis slow.
            {{- template "arrays_columns" .}}
{{- end}}{{end}}
{{- if not .Instant}}
        FROM meter_records
        WHERE {{template "record_scope"}}
            AND direction = @dir AND start_time >= toDateTime(@w0) AND start_time < toDateTime(@w1)
        GROUP BY direction, tariff_rate, start_time, end_time
        HAVING @session = '' OR sess = @session
{{- end}}
)
{{- template "cost_order" .}}
{{end}}

{{define "arrays_component"}}
{{- /* Money, covered seconds and confidence of one component for each record. */ -}}
{{- if not .Present}},
        -- No segment of component {{.N}}: nothing to pay and nothing covered (act says
        -- whether the component has tariffs, so whether uncovered time lowers confidence).
        0. AS m{{.N}}, toInt64(0) AS cov{{.N}}, 1. AS c{{.N}}
{{- else}}
{{- $n := .N}},
        -- Component {{$n}}: candidates are segments first[b0] … last[b1] (none when empty);
        -- o{{$n}} holds the record's seconds inside each (≤ 0: none).
        arrayElement(s{{$n}}_first, b0) AS i{{$n}}, greatest(toInt64(arrayElement(s{{$n}}_last, b1)) - i{{$n}} + 1, 0) AS k{{$n}},
        arrayMap((a, b) -> toInt64(least(re, b)) - toInt64(greatest(rs, a)),
            arraySlice(s{{$n}}_start, i{{$n}}, k{{$n}}), {{template "arrays_ends" .}}) AS o{{$n}},
        arraySum(arrayMap(o -> greatest(o, 0), o{{$n}})) AS cov{{$n}},
        arraySum(arrayMap((o, p) -> e * greatest(o, 0) / (re - rs) * p / 1000, o{{$n}}, arraySlice(s{{$n}}_price, i{{$n}}, k{{$n}}))) AS m{{$n}},
        {{- if .OneConf}}
        -- One confidence for every segment: the least over the segments the record meets.
        if(cov{{$n}} > 0, least(rc, toFloat64(@s{{$n}}_conf1)), 1.) AS c{{$n}}
        {{- else}}
        arrayReduce('min', arrayPushBack(arrayMap((o, x) -> if(o > 0, least(rc, x), 1.), o{{$n}}, arraySlice(s{{$n}}_conf, i{{$n}}, k{{$n}})), 1.)) AS c{{$n}}
        {{- end}}
{{- end}}
{{end}}

{{define "arrays_money"}}
{{- /* A record's money (tr 1: import, commodity m1 + non-commodity m2; tr 2: export m3)
and its confidence. act has bit 1 << (n - 1) set when component n has tariffs. */ -}},
    multiIf(tr = 1, m1 + m2, tr = 2, m3, 0.) AS m, multiIf(tr = 1, m1, tr = 2, m3, 0.) AS m_com,
    if(tr = 1, m2, 0.) AS m_non,
    -- A component with tariffs that leaves a second of a record unpriced (a missing
    -- market price) prices it 0 there, with confidence 0.
    least(least(rc, multiIf(tr = 1, least(c1, c2), tr = 2, c3, 1.)),
        if((tr = 1 AND ((bitAnd(act, 1) != 0 AND cov1 < re - rs) OR (bitAnd(act, 2) != 0 AND cov2 < re - rs)))
            OR (tr = 2 AND bitAnd(act, 4) != 0 AND cov3 < re - rs), 0., 1.)) AS conf
{{- end}}

{{define "arrays_columns"}}
{{- /* One component's arrays as columns of the records' level. Literals are most of what
18.16 spends on these queries (a market month's 2,928 segments: 31 ms with no rows to read),
so ends that are the next starts and one confidence for all are not sent as arrays. */ -}}
{{- $n := .N}}
            @s{{$n}}_start AS s{{$n}}_start, @s{{$n}}_price AS s{{$n}}_price,
            @s{{$n}}_first AS s{{$n}}_first, @s{{$n}}_last AS s{{$n}}_last
{{- if not .Contiguous}}, @s{{$n}}_end AS s{{$n}}_end{{end}}
{{- if not .OneConf}}, @s{{$n}}_conf AS s{{$n}}_conf{{end}}
{{- end}}

{{define "arrays_ends"}}
{{- /* The ends of candidate segments i … i + k - 1: without gaps, the next segments' starts
and, after the last segment, its end. */ -}}
{{- $n := .N}}
{{- if .Contiguous}}arraySlice(arrayPushBack(arraySlice(s{{$n}}_start, i{{$n}} + 1, k{{$n}}), toUInt32(@s{{$n}}_last_end)), 1, k{{$n}})
{{- else}}arraySlice(s{{$n}}_end, i{{$n}}, k{{$n}}){{end}}
{{- end}}
