{{define "fleet_recorded"}}
-- The directions in which locations (the external table _locs) have location-level
-- records written on the UTC dates [@u0, @u1] (docs/costs.md, "POST /costs/fleet"): the
-- locations a page by id may have to list as skipped, from the change counts
-- (reading_changes), without reading the records.
SELECT location_id, toString(direction) AS dir
FROM reading_changes
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs)
    AND device_id = '' AND day >= toDate(@u0) AND day <= toDate(@u1)
GROUP BY location_id, dir
{{end}}
