{{- /* The fragments of fleet_arrays.sql. A component's price segments arrive as constant
arrays, sorted and disjoint, with a bucket index (first, last: 1-based segment numbers per
bucket of @bucket seconds from @t0) naming the few segments a record can touch. */ -}}
{{define "arrays_component"}}
{{- /* Money, covered seconds and confidence of one component for each record. */ -}}
{{- if not .Present}},
        -- No segment of component {{.N}}: nothing to pay and nothing covered (@tl_bits says
        -- whether the component has tariffs, so whether uncovered time lowers confidence).
        0. AS m{{.N}}, toInt64(0) AS cov{{.N}}, 1. AS c{{.N}}
{{- else}}
{{- $n := .N}},
        -- Component {{$n}}: candidates are segments first[b0] … last[b1] (none when empty);
        -- o{{$n}} holds the record's seconds inside each (0: none). The money is the record's
        -- energy per second times its seconds × price summed over them: a lambda that captures
        -- a column copies it once per element (a fleet month on 18.16: ~30 ms of 420 ms CPU).
        arrayElement(s{{$n}}_first, b0) AS i{{$n}}, greatest(toInt64(arrayElement(s{{$n}}_last, b1)) - i{{$n}} + 1, 0) AS k{{$n}},
        arrayMap((a, b) -> greatest(toInt64(least(re, b)) - toInt64(greatest(rs, a)), 0),
            arraySlice(s{{$n}}_start, i{{$n}}, k{{$n}}), {{template "arrays_ends" .}}) AS o{{$n}},
        arraySum(o{{$n}}) AS cov{{$n}},
        {{untieredMoney "e" (printf "arraySum(arrayMap((o, p) -> o * p, o%d, arraySlice(s%d_price, i%d, k%d)))" $n $n $n $n)}} AS m{{$n}},
        {{- if .OneConf}}
        -- One confidence for every segment: the least over the segments the record meets.
        if(cov{{$n}} > 0, least(rc, toFloat64(@s{{$n}}_conf1)), 1.) AS c{{$n}}
        {{- else}}
        arrayReduce('min', arrayPushBack(arrayMap((o, x) -> if(o > 0, least(rc, x), 1.), o{{$n}}, arraySlice(s{{$n}}_conf, i{{$n}}, k{{$n}})), 1.)) AS c{{$n}}
        {{- end}}
{{- end}}
{{end}}

{{define "arrays_money"}}
{{- /* A record's money (tr 1: import, commodity m1 + non-commodity m2; tr 2: export m3;
fleet_arrays.sql sums the two parts) and the least confidence of the record and the segments
it meets (uncovered time lowers it in the sums: fleet_arrays.sql). */ -}},
    multiIf(tr = 1, m1, tr = 2, m3, 0.) AS m_com, if(tr = 1, m2, 0.) AS m_non,
    least(rc, multiIf(tr = 1, least(c1, c2), tr = 2, c3, 1.)) AS conf
{{- end}}

{{define "arrays_confidence"}}
{{- /* The least confidence of a group's records and of the segments they meet. Where every
component has one confidence for all its segments, that is the records' least and each
component's confidence if the group's records meet any of its segments (covered seconds
are never negative): aggregates of columns read, with no per-record expression (a fleet
month on 18.16: ~20 ms less CPU of ~330). Else the least of the records' conf. */ -}}
{{- if .SegmentConfs}}min(conf)
{{- else}}
{{- range .Comps}}{{if .Present}}least({{end}}{{end}}min(rc)
{{- range .Comps}}{{if .Present}}, if(sumIf(cov{{.N}}, tr = {{if eq .N 3}}2{{else}}1{{end}}) > 0, toFloat64(@s{{.N}}_conf1), 1.)){{end}}{{end}}
{{- end}}
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
