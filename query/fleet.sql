{{define "fleet"}}
-- Energy cost of many locations' (or devices') records, summed per group and bucket
-- (a reading, local day, local month or the whole window) in one read of the records.
-- Prices come from the "segments" of cost_segments.sql, the definition every cost path
-- shares. Per-record figures are never materialised: a bucket's money is the sum of its
-- pieces; its confidence is the least of its records' and pieces' confidences, or 0 when
-- a component with tariffs leaves some second of a record unpriced (segments of one
-- component never overlap, so covered seconds fall short of record seconds exactly then).
SELECT {{template "fleet_group" .}}, {{template "fleet_key" .}},
    sumIf(e, comp = 0) AS energy, sum(xm) AS money, sumIf(xm, comp != 2) AS money_com, sumIf(xm, comp = 2) AS money_non,
    least(min(xc), {{uncovered "arrayElement(@act_bits, li)" "sumIf(xlen, tr = 1)" "sumIf(xcov, comp = 1)" "sumIf(xcov, comp = 2)" "sumIf(xlen, tr = 2)" "sumIf(xcov, comp = 3)"}}) AS confidence,
    countIf(comp = 0 AND tr = 1) AS n_import, countIf(comp = 0 AND tr = 2) AS n_export,
    -- When the bucket's last record ends (priced buckets: docs/costs.md).
    max(re) AS reach,
{{- if .Dedup}}
    toUInt8(0) AS dirty
{{- else if .Tiered}}
    max(xdirty) AS dirty
{{- else}}
    -- Two rows of one reading (see fleet_dirty in fleet_arrays.sql; rid is the reading's key).
    {{repeats "rid" "comp = 0"}} AS dirty
{{- end}}
FROM
(
{{- if .Tiered}}
    {{template "fleet_tiered" .}}
{{- else}}
    {{template "fleet_single" .}}
{{- end}}
)
GROUP BY {{template "fleet_group_by" .}}, k, kend, ktr
ORDER BY li, gdev, k, kend, ktr
{{end}}

{{define "fleet_group"}}
{{- /* A group's location, as its number li (its place in @act_loc: the reader names it),
and device. Groups are keyed by li and, by device, the device; the device of any other
group is the one the readings are filtered on (readings_rows). Ids are not carried past the
records: a key of fixed width hashes faster than one of strings, and strings copied through
the levels cost as much again (a fleet month by DAY on 18.16: the untiered query ~45 ms of
~300 ms CPU less, the tiered ~50 ms of ~270 ms). */ -}}
li, {{if .Devices}}dev{{else if .Device}}@device{{else}}''{{end}} AS gdev
{{- end}}

{{define "fleet_group_by"}}li{{if .Devices}}, dev{{end}}{{end}}

{{define "fleet_dev"}}{{if .Devices}}dev, {{end}}{{end}}

{{define "fleet_key"}}
{{- /* The bucket of a row: k its start (a reading's start, a local day's or month's, 0 for
the window), and for a reading its end, tariff rate and references. */ -}}
{{- if eq .Aggregation "RECORD"}}rs AS k, re AS kend, tr AS ktr,
{{- if .Refs}} any(sess) AS ksess, any(ref) AS kref{{else}} '' AS ksess, '' AS kref{{end}}
{{- else}}
{{- if eq .Aggregation "DAY"}}toUInt32(toStartOfDay(toDateTime(rs), @tz))
{{- else if eq .Aggregation "MONTH"}}toUInt32(toDateTime(toStartOfMonth(toDateTime(rs), @tz), @tz))
{{- else}}toUInt32(0){{end}} AS k, toUInt32(0) AS kend, toUInt8(0) AS ktr, '' AS ksess, '' AS kref
{{- end}}
{{- end}}

{{define "fleet_records"}}
-- The fleet's meter records (location-level, or devices'), with their location's number
-- li (which components have tariffs there is @act_bits[li], read of each group once, after
-- the sums: not aggregated per record) and a sentinel hour 0 that no segment has, so
-- ALL LEFT JOIN keeps each record once as comp 0 even where nothing prices it.
-- (18.16 analyses a subquery again for every level above it, ~5 ms a level even with no
-- rows: per-record expressions sit in as few levels as they can.)
SELECT {{template "fleet_dev" .}}li, cityHash64(dir, tr, rs, re) AS rid, rs, re, e, rc, tr, tr AS ctr,
    toUInt8(dir = @dir AND rs >= @w0{{if .Session}} AND sess = @session{{end}}) AS is_out,
{{- if .Refs}} sess, ref,{{end}}
    -- Locations on one product are priced by the segments of one of them, numbered (rep:
    -- its place in @rep_locs): the JOIN's hash table holds each product's segments once,
    -- keyed by numbers (a fleet month's 100 tiered locations on 18.16: ~25 ms of ~260 ms
    -- CPU less than by the location's id).
    toUInt32(arrayElement(@reps, li)) AS rep,
    arrayJoin(arrayPushBack({{hours "rs" "re"}}, toUInt32(0))) AS hb
FROM
(
    {{template "readings" .}}
)
-- Each location's own tier lookback: records before it run no counter of its window.
WHERE rs >= arrayElement(@lookbacks, li)
{{end}}

{{define "fleet_segments"}}
-- Price segments of the fleet's products (by representative location) by the UTC hours they cover.
SELECT toUInt32(indexOf(@rep_locs, loc)) AS rep, comp, ctr, ss, se, tier, hi, price, sconf, arrayJoin({{hours "ss" "se"}}) AS hb
FROM ({{template "segment_source" .}})
{{end}}

{{define "fleet_single"}}
-- Untiered: each record split at every price segment it meets, priced where it lies.
SELECT {{template "fleet_dev" .}}li, rid, rs, re, comp, tr, e,{{if .Refs}} sess, ref,{{end}}
    if(comp = 0, rc, least(rc, sconf)) AS xc,
    if(comp = 0, 0, toInt64(least(re, se)) - toInt64(greatest(rs, ss))) AS xcov,
    if(comp = 0, toInt64(re - rs), 0) AS xlen,
    if(comp = 0, 0., {{untieredMoney "e" "xcov * price[1]"}}) AS xm
FROM ({{template "fleet_records" .}}) AS recs
ALL LEFT JOIN ({{template "fleet_segments" .}}) AS segs USING (rep, ctr, hb)
WHERE hb = 0 OR (ss < re AND se > rs AND hb = intDiv(greatest(rs, ss), 3600))
{{end}}

{{define "fleet_tiered"}}
-- Tiered (the one definition of tier pieces): each record split at every price segment of
-- its components; pieces run their tier counters per location and device, component and
-- tier period (comp 0 holds the records themselves and prices nothing).
SELECT {{template "fleet_dev" .}}li, it.1 AS rs, it.2 AS re, comp,
    it.3 AS tr, it.4 AS e, it.5 AS xc, it.6 AS xcov, it.7 AS xlen,{{if .Refs}} it.12 AS sess, it.13 AS ref,{{end}}
    gdirty AS xdirty,
    -- The counter runs over [cum - wh, cum): each band's part at its price (bandMoney).
    {{bandMoney "it.9" "it.10" "cum" "it.8"}} AS xm
FROM
(
    -- Records meet the segments of their hours and the pieces are gathered per tier
    -- period in one level (one level fewer for 18.16 to analyse again).
    SELECT {{template "fleet_dev" .}}li, comp,
{{- if not .Dedup}}
        -- comp 0 holds each row once, lookback rows too (their counts run the counters).
        {{repeats "rid" "comp = 0"}} AS gdirty,
{{- else}}
        toUInt8(0) AS gdirty,
{{- end}}
        -- Pieces that start before the window (the tier lookback; every reported record
        -- starts in it) only start the counter: one sum, no sort (a fleet's day mid-month
        -- on 18.16: the tiered query 168 ms alone, 40 MiB at peak; sorted too, 190 ms, 89 MiB).
        sumIf(if(comp = 0, 0., {{pieceWh "e" "(if(comp = 0, 0, toInt64(least(re, se)) - toInt64(greatest(rs, ss))) AS pcov)"}}) AS pwh,
            (if(comp = 0, rs, greatest(rs, ss)) AS ps) < @w0) AS off,
        -- Counters run in time order (ties by record) within one tier period. comp 0 runs
        -- none: its records are gathered unsorted (a group is of one comp, so one of the two
        -- arrays is empty; a fleet month's 100 tiered locations on 18.16: ~30 ms of ~270 ms
        -- CPU less than sorting them too).
        arrayConcat(groupArrayIf({{template "tier_item" .}}, comp = 0 AND ps >= @w0),
            arrayMap(x -> tupleElement(x, 2), arraySort(x -> tupleElement(x, 1), groupArrayIf((
                toUInt64(ps) * 4294967296 + rid % 4294967296, {{template "tier_item" .}}), comp != 0 AND ps >= @w0)))) AS items
    FROM ({{template "fleet_records" .}}) AS recs
    ALL LEFT JOIN ({{template "fleet_segments" .}}) AS segs USING (rep, ctr, hb)
    WHERE hb = 0 OR (ss < re AND se > rs AND hb = intDiv(greatest(rs, ss), 3600))
    GROUP BY {{template "fleet_group_by" .}}, comp, tier
)
ARRAY JOIN
    items AS it,
    {{counterEnds "items" "8" "off"}} AS cum
WHERE it.11 = 1
{{end}}

{{define "tier_item"}}
{{- /* One record (comp 0) or piece of a tier period, the fields fleet_tiered reads of it
after ARRAY JOIN (it.1 … it.11, it.12 and it.13 with references). */ -}}
(rs, re, tr, if(comp = 0, e, 0.), if(comp = 0, rc, least(rc, sconf)), pcov, if(comp = 0, toInt64(re - rs), 0),
    pwh, hi, price, is_out{{if .Refs}}, sess, ref{{end}})
{{- end}}
