{{define "plan_segments"}}
-- One location's price segments over [@t0, @t1): the "segments" every cost path prices
-- with (cost_segments.sql), read out for the array path and price timelines to carry.
SELECT comp, greatest(ss, @t0) AS s0, least(se, @t1) AS s1, price[1] AS rate, sconf
FROM ({{template "segments" .}})
WHERE ss < @t1 AND se > @t0 AND has(@comps, toUInt32(comp)) AND length(price) > 0
ORDER BY s0, comp
LIMIT @limit
{{end}}
