{{define "demand_readings"}}
-- The latest version of each reading of one scope and direction starting in [@w0, @w1):
-- the whole local months that demand charges are measured over. The charges package
-- splits them into local-clock intervals in Go (docs/costs.md, "Bill charges").
SELECT rs, re, e
FROM ({{template "records" .}})
WHERE is_out = 1
{{end}}
