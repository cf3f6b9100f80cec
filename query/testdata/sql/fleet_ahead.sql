-- A page by location id (docs/costs.md, "POST /costs/fleet"): the locations from @from on,
-- in id order, that have location-level records of direction @dir counted on the UTC dates
-- [@u0, @u1] (reading_changes), at most @n of them, each with its first and last such
-- date (day numbers) and how many count rows it has there (at least how many dates: a
-- summing table may still hold a date in several rows): the reader bounds the rows each
-- can give the page, so that it prices about as many locations at once as fill the page.
-- When @named, only the locations of the external table _locs.
SELECT location_id, toUInt32(min(day)) AS first_day, toUInt32(max(day)) AS last_day, toUInt32(count()) AS days
FROM reading_changes
WHERE account_id = @account AND live_mode = @live AND location_id >= @from
    AND (@named = 0 OR location_id IN (SELECT location_id FROM _locs))
    AND device_id = '' AND direction = @dir AND day >= toDate(@u0) AND day <= toDate(@u1)
GROUP BY location_id
ORDER BY location_id
LIMIT @n
