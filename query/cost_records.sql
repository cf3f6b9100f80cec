{{define "records"}}
-- Meter records of one scope from the tier lookback on. FINAL is filtered on sorting-key
-- columns only: every version of a reading shares them, so no older version can leak.
SELECT rid, rs, re, e, rc, tr,
    toUInt8({{if .Instant}}0{{else}}dir = @dir AND rs >= @w0 AND (@session = '' OR sess = @session){{end}}) AS is_out,
    sess, ref
FROM
(
    SELECT
        cityHash64(toString(direction), toString(tariff_rate), toUInt32(start_time), toUInt32(end_time)) AS rid,
        toUInt32(start_time) AS rs, toUInt32(end_time) AS re, energy_wh AS e, confidence AS rc,
        toString(direction) AS dir,
        toUInt8(multiIf(tariff_rate = 'IMPORT', 1, tariff_rate = 'EXPORT', 2, 3)) AS tr,
        session_reference_id AS sess, record_reference_id AS ref
    FROM meter_records FINAL
    WHERE account_id = @account AND live_mode = @live AND location_id = @location AND device_id = @device
        AND start_time >= toDateTime(@lookback) AND start_time < toDateTime(@w1)
)
{{- if .Instant}}
-- The instant record, priced as if stored: stored readings before it run its tier counter.
UNION ALL
SELECT toUInt64(0) AS rid, toUInt32(@i_rs) AS rs, toUInt32(@i_re) AS re, toFloat64(@i_e) AS e, toFloat64(@i_rc) AS rc,
    toUInt8(@i_tr) AS tr, toUInt8(1) AS is_out, @i_sess AS sess, @i_ref AS ref
{{- end}}
{{end}}
