{{define "readings"}}
{{- if and .Cluster .Comps}}
    -- On a cluster the price arrays join the readings here, after the distributed read:
    -- as columns of that read every shard would send them again with every row.
    SELECT *
{{- range .Comps}}{{if .Present}},
        {{- template "arrays_columns" .}}
{{- end}}{{end}}
    FROM
    (
{{- template "readings_rows" .}}
    )
{{- else}}
{{- template "readings_rows" .}}
{{- end}}
{{- end}}

{{define "readings_rows"}}
{{- /* The readings every cost query prices (one definition of "the latest version of a
reading", docs/costs.md): the query's locations' own readings, its devices' or one
device's, from @lookback (the tier lookback; the window's start without tiers) to @w1, of
the asked direction unless tiered (tier counters read both). A reading's key is its
location, device, direction, tariff_rate, start and end; how its versions become one is
.Dedup. Each reading carries its location's number li (fleet_li) from this level: on a
cluster the shards compute it and send it in place of the location's id (a cold fleet
month: 1.39 M ids). With .Comps (fleet_arrays.sql) the price arrays enter as columns of
this level. */ -}}
    -- The readings: {{template "dedup_note" .}}
    SELECT location_id AS loc, {{template "fleet_li"}}, device_id AS dev, toString(direction) AS dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        toUInt32(start_time) AS rs, toUInt32(end_time) AS re,
{{- if eq .Dedup "argmax"}}
        argMax(energy_wh, version) AS e, argMax(confidence, version) AS rc
{{- if or .Refs .Session}},
        argMax(session_reference_id, version) AS sess, argMax(record_reference_id, version) AS ref
{{- end}}
{{- else}}
        energy_wh AS e, confidence AS rc
{{- if or .Refs .Session}},
        session_reference_id AS sess, record_reference_id AS ref
{{- end}}
{{- end}}
{{- if not .Cluster}}{{range .Comps}}{{if .Present}},
        -- The arrays enter as columns: 18.16 spells a literal out in the name of every
        -- expression built on it, and those names made analysis slow.
        {{- template "arrays_columns" .}}
{{- end}}{{end}}{{end}}
    FROM meter_records{{if eq .Dedup "final"}} FINAL{{end}}
    -- The locations first: where they are a few of those in the granules read (a tiered
    -- batch of every tenth location), the other columns are read for their rows only (a
    -- fleet month's 100 tiered locations on 18.16: 56-72 ms of CPU reading, 76-90 ms in WHERE).
    PREWHERE location_id IN @locs
    -- The scope narrows the key range read, and is not compared row by row: a record's
    -- location is always its own scope's (ingest refuses any other, and ids are random,
    -- never reused), and @locs are the scope's own, so location_id IN @locs keeps the
    -- rows to the scope (docs/costs.md, "Scope of a cost query"). On 18.16 the comparison
    -- took 65 of 380 ms of a cold fleet month's untiered statement on one thread.
    WHERE indexHint(account_id = @account AND live_mode = @live)
        AND device_id {{if .Device}}= @device{{else if .Devices}}!= ''{{else}}= ''{{end}}
{{- if not .Tiered}}
        AND direction = @dir
{{- end}}
        AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
{{- if eq .Dedup "argmax"}}
    GROUP BY location_id, device_id, direction, tariff_rate, start_time, end_time
{{- end}}
{{- if and .Session (not .Tiered)}}
    -- One session's readings (tiered, every reading runs the counters: is_out picks them).
    HAVING sess = @session
{{- end}}
{{- if .Instant}}
    -- The request's record, priced as if stored (@w1 is its start: the stored readings
    -- before it run its tier counter).
    UNION ALL
    SELECT @location AS loc, {{template "fleet_li"}}, @device AS dev, @dir AS dir, toUInt8(@i_tr) AS tr, toUInt32(@i_rs) AS rs,
        toUInt32(@i_re) AS re, toFloat64(@i_e) AS e, toFloat64(@i_rc) AS rc
{{- if or .Refs .Session}}, @i_sess AS sess, @i_ref AS ref{{end}}
{{- end}}
{{- end}}

{{define "fleet_li"}}
{{- /* The location's number: its place in @act_loc, whose parallel arrays say what prices it
(every reading carries it: readings_rows; bound by numberedLocations). */ -}}
transform(loc, @act_loc, @act_n, toUInt32(0)) AS li
{{- end}}

{{define "dedup_note"}}
{{- if eq .Dedup "final"}}the latest version of each, by FINAL (every filter is on a key
    -- column; for large batches: on 18.16 a 900-location month took 795 ms with FINAL's merge
    -- of sorted parts, 960 ms with argMax; 100 locations 466 against 168 ms).
{{- else if eq .Dedup "argmax"}}the latest version of each, by argMax (small batches, one
    -- location: on 18.16 FINAL made one location's month ~8x slower, 105–215 ms against 18 ms).
{{- else}}every stored version, undeduplicated: a reading sent twice
    -- and not yet merged is counted twice, which "dirty" reports (a fleet month read 568 ms
    -- with FINAL against 306 ms this way on 18.16). Go prices dirty locations again, deduplicated.
{{- end}}
{{- end}}
