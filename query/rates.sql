{{define "rates"}}
-- The price segments of one direction's components inside [@w0, @w1), first band only
-- (the price a device pays for its next kWh is not what the timeline shows).
SELECT comp, toUInt32(greatest(ss, @w0)) AS s, toUInt32(least(se, @w1)) AS e, price[1] AS rate, sconf
FROM ({{template "segments" .}})
WHERE ss < @w1 AND se > @w0 AND has(@comps, toInt32(comp))
ORDER BY s, comp
{{end}}
