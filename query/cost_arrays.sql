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
        -- Component {{$n}}: i{{$n}}a and i{{$n}}b number the segments holding the record's first
        -- and last second. Its money per kWh is the difference of the running sum of price ×
        -- seconds (the integral function, cost.go) at its end and start: a few lookups per
        -- record. Slicing the segments a record can touch and mapping lambdas over them cost
        -- more (a fleet month's 900 untiered locations replayed on 18.16, one thread: 487 ms
        -- of CPU against 456, and 353 pricing nothing).
        {{template "arrays_find" (findArgs . "b0" "<= rs")}} AS i{{$n}}a, {{template "arrays_find" (findArgs . "b1" "< re")}} AS i{{$n}}b,
        {{- if .Gapless}}
        -- Every second of every timeline is priced.
        toInt64(re - rs) AS cov{{$n}},
        {{- else}}
        arrayElement(s{{$n}}_cov, i{{$n}}b) + arrayElement(s{{$n}}_covers, i{{$n}}b) * (re - @t0)
            - arrayElement(s{{$n}}_cov, i{{$n}}a) - arrayElement(s{{$n}}_covers, i{{$n}}a) * (rs - @t0) AS cov{{$n}},
        {{- end}}
        {{untieredMoney "e" (printf "%s - %s" (integral $n "b" "re") (integral $n "a" "rs"))}} AS m{{$n}},
        {{- if .OneConf}}
        -- One confidence for every segment: the least over the segments the record meets.
        if(cov{{$n}} > 0, least(rc, toFloat64(@s{{$n}}_conf1)), 1.) AS c{{$n}}
        {{- else}}
        -- The least confidence of the segments i{{$n}}a … i{{$n}}b (a gap's is 1).
        if(cov{{$n}} > 0, least(rc, arrayReduce('min', arraySlice(s{{$n}}_conf, i{{$n}}a, i{{$n}}b - i{{$n}}a + 1))), 1.) AS c{{$n}}
        {{- end}}
{{- end}}
{{end}}

{{define "arrays_find"}}
{{- /* The segment holding second t of a record in bucket b: the bucket's first segment,
moved on past each later one that starts by t (.Cmp: "<= rs", or "< re" for the last
second). Half-hour buckets hold one segment of a half-hourly price: no step. */ -}}
arrayElement(s{{.N}}_first, {{.B}})
{{- range .Steps}} + (arrayElement(s{{$.N}}_start, arrayElement(s{{$.N}}_first, {{$.B}}) + {{.}}) {{$.Cmp}}){{end}}
{{- end}}

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
month on 18.16: ~20 ms less CPU of ~330). A confidence of 1 is left out (LowersConf).
Else the least of the records' conf. */ -}}
{{- if .SegmentConfs}}min(conf)
{{- else}}
{{- range .Comps}}{{if and .Present .LowersConf}}least({{end}}{{end}}min(rc)
{{- range .Comps}}{{if and .Present .LowersConf}}, if(sumIf(cov{{.N}}, tr = {{.Rate}}) > 0, toFloat64(@s{{.N}}_conf1), 1.)){{end}}{{end}}
{{- end}}
{{- end}}

{{define "arrays_columns"}}
{{- /* One component's arrays as columns of the records' level. Literals are most of what
18.16 spends on these queries (a market month's 2,928 segments: 31 ms with no rows to read),
so starts no step reads, coverage where nothing is uncovered and one confidence for all are
not sent as arrays. */ -}}
{{- $n := .N}}
            @s{{$n}}_price AS s{{$n}}_price, @s{{$n}}_base AS s{{$n}}_base, @s{{$n}}_first AS s{{$n}}_first
{{- if .Steps}}, @s{{$n}}_start AS s{{$n}}_start{{end}}
{{- if not .Gapless}}, @s{{$n}}_cov AS s{{$n}}_cov, @s{{$n}}_covers AS s{{$n}}_covers{{end}}
{{- if not .OneConf}}, @s{{$n}}_conf AS s{{$n}}_conf{{end}}
{{- end}}
