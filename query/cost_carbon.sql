{{define "carbon_records"}}
-- The asked records of one scope with their local day, for weighing by carbon intensity
-- in Go (carbon.Weigh); the day is the expression cost_columns buckets by, so keys match.
SELECT rs, re, e, rc, tr, toUInt32(toStartOfDay(toDateTime(rs), @tz)) AS day
FROM ({{template "records" .}})
WHERE is_out = 1
{{end}}
