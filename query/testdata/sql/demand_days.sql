-- What some locations' stale demand months are measured again from (docs/costs.md, "Bill
-- charges"): for each stored version of each (location, month, tariff key) of the
-- locations of the external table _locs in one direction, months starting in [@m0, @m1]:
-- the peaks of each local day, the change counts of the reach's dates they were measured
-- under and the longest reading measured. The reader keeps the latest version of each.
SELECT location_id, toUInt32(month_start) AS month, tariff_key, version, day_peaks, reach_counts, longest
FROM demand_days
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs) AND direction = @dir
    AND month_start >= toDateTime(@m0) AND month_start <= toDateTime(@m1)
    AND substring(tariff_key, 1, length(@kept_prefix)) = @kept_prefix
