{{define "carbon_records"}}
-- The asked readings of one scope with their local day, for weighing by carbon intensity
-- in Go (carbon.Weigh); the day is the expression fleet_key buckets by, so keys match.
SELECT rs, re, e, rc, tr, toUInt32(toStartOfDay(toDateTime(rs), @tz)) AS day
FROM
(
    {{template "readings" .}}
)
{{end}}
