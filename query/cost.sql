{{define "cost"}}
-- Energy cost of one scope's records: one row per record, or per local day.
SELECT {{template "cost_columns" .}}
FROM
(
    SELECT rs, re, e, tr, sess, ref, m, m_com, m_non,
        -- A record not fully covered by a component that has tariffs (a market price is
        -- missing) is priced 0 there with confidence 0.
        least(least(rc, if(n > 0, c, 1.)),
            if((tr = 1 AND ((has(@active, 1) AND cov1 < re - rs) OR (has(@active, 2) AND cov2 < re - rs)))
                OR (tr = 2 AND has(@active, 3) AND cov3 < re - rs), 0., 1.)) AS conf
    FROM
    (
{{- if .Tiered}}
        SELECT * FROM
        (
            SELECT rid, rs, re, e, rc, tr, sess, ref FROM ({{template "records" .}}) WHERE is_out = 1
        ) AS recs
        -- Joined subqueries are aliased: current releases refuse them without one.
        ANY LEFT JOIN
        (
            SELECT rid, sum(money) AS m, sumIf(money, comp != 2) AS m_com, sumIf(money, comp = 2) AS m_non,
                min(pconf) AS c, count() AS n,
                sumIf(cover, comp = 1) AS cov1, sumIf(cover, comp = 2) AS cov2, sumIf(cover, comp = 3) AS cov3
            FROM ({{template "pieces" .}})
            GROUP BY rid
        ) AS money USING rid
{{- else}}
        {{template "single" .}}
{{- end}}
    )
)
{{- template "cost_order" .}}
{{end}}

{{define "cost_columns"}}
{{- /* The columns of every cost query (costRow), per record or summed per local day. */ -}}
{{- if .Daily}}
    toUInt32(toStartOfDay(toDateTime(rs), @tz)) AS k, toUInt32(0) AS kend, toUInt8(0) AS ktr, '' AS ksess, '' AS kref,
    sum(e) AS energy, sum(m) AS money, sum(m_com) AS money_com, sum(m_non) AS money_non, min(conf) AS confidence,
    countIf(tr = 1) AS n_import, countIf(tr = 2) AS n_export
{{- else}}
    rs AS k, re AS kend, tr AS ktr, sess AS ksess, ref AS kref,
    e AS energy, m AS money, m_com AS money_com, m_non AS money_non, conf AS confidence,
    toUInt64(tr = 1) AS n_import, toUInt64(tr = 2) AS n_export
{{- end}}
{{end}}

{{define "cost_order"}}
{{- /* Per-record rows or local days, in time order. */}}
{{- if .Daily}}
GROUP BY k
{{- end}}
ORDER BY k, kend, ktr
{{- end}}
