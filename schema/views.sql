{{- /* The materialized views on meter_records, defined once for the migrations that create
them: 0010 and 0021, and 0024, which creates them again after it swaps the table (current
ClickHouse keeps a view on the table it was created on, not on the name); and a stored
row's identity, by which 0024 compares two tables' rows. */ -}}

{{define "reading_changes_mv"}}CREATE MATERIALIZED VIEW IF NOT EXISTS reading_changes_mv {{.OnCluster}} TO {{qualified (table "reading_changes")}}
AS SELECT account_id, live_mode, location_id, device_id, direction, toDate(start_time) AS day, toUInt64(count()) AS n,
    max(version) AS last_version
FROM {{qualified (table "meter_records")}}
GROUP BY account_id, live_mode, location_id, device_id, direction, day{{end}}

{{define "reading_changes_by_month_mv"}}CREATE MATERIALIZED VIEW IF NOT EXISTS reading_changes_by_month_mv {{.OnCluster}} TO {{qualified (table "reading_changes_by_month")}}
AS SELECT account_id, live_mode, location_id, device_id, direction,
    arrayJoin({{reach_months "toDate(start_time)"}}) AS month,
    toUInt64(count()) AS n, sum({{day_weight "toDate(start_time)"}}) AS print, max(version) AS last_version
FROM {{qualified (table "meter_records")}}
GROUP BY account_id, live_mode, location_id, device_id, direction, month{{end}}

{{define "record_key"}}account_id, live_mode, location_id, device_id, direction, tariff_rate, start_time, end_time, version{{end}}
