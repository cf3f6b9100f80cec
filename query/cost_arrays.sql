{{define "arrays"}}
-- Untiered costs in one read of the records and no JOIN (each JOIN stage costs 10–20 ms
-- on 18.16): every component's price segments arrive as constant arrays, sorted and
-- disjoint, with a bucket index (@b_first, @b_last: 1-based segment numbers per @bucket
-- seconds from @t0) naming the few segments a record can touch.
SELECT rs, re, e, rc, tr, sess, ref,
    multiIf(tr = 1, m1 + m2, tr = 2, m3, 0.) AS m, multiIf(tr = 1, m1, tr = 2, m3, 0.) AS m_com,
    if(tr = 1, m2, 0.) AS m_non,
    multiIf(tr = 1, least(c1, c2), tr = 2, c3, 1.) AS c, toUInt64(1) AS n, cov1, cov2, cov3
FROM
(
    SELECT rs, re, e, rc, tr, sess, ref
{{- range $comp := .Comps}}
        {{template "arrays_component" $comp}}
{{- end}}
    FROM
    (
        SELECT rs, re, e, rc, tr, sess, ref,
            toUInt32(intDiv(rs - @t0, @bucket) + 1) AS b0, toUInt32(intDiv(re - 1 - @t0, @bucket) + 1) AS b1
        FROM ({{template "records" .}})
        WHERE is_out = 1
    )
)
{{end}}

{{define "arrays_component"}}
{{- /* Money, covered seconds and confidence of one component for each record. */ -}}
{{- if not .Present}}
        , 0. AS m{{.N}}, toInt64(0) AS cov{{.N}}, 1. AS c{{.N}}
{{- else}}
{{- with .N}}
        , arrayElement(@s{{.}}_first, b0) AS i{{.}},
        -- Candidates are segments first[b0] … last[b1]; none when that range is empty.
        greatest(toInt64(arrayElement(@s{{.}}_last, b1)) - i{{.}} + 1, 0) AS k{{.}},
        -- Seconds of the record inside each candidate segment (≤ 0: none).
        arrayMap((a, b) -> toInt64(least(re, b)) - toInt64(greatest(rs, a)),
            arraySlice(@s{{.}}_start, i{{.}}, k{{.}}), arraySlice(@s{{.}}_end, i{{.}}, k{{.}})) AS o{{.}},
        arraySum(arrayMap(o -> greatest(o, 0), o{{.}})) AS cov{{.}},
        arraySum(arrayMap((o, p) -> e * greatest(o, 0) / (re - rs) * p / 1000, o{{.}}, arraySlice(@s{{.}}_price, i{{.}}, k{{.}}))) AS m{{.}},
        arrayReduce('min', arrayPushBack(arrayMap((o, x) -> if(o > 0, least(rc, x), 1.), o{{.}}, arraySlice(@s{{.}}_conf, i{{.}}, k{{.}})), 1.)) AS c{{.}}
{{- end}}
{{- end}}
{{end}}
