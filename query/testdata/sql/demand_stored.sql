-- The kept demand peaks of some locations (the external table _locs) in one direction, for
-- the local months starting in [@m0, @m1] (docs/costs.md, "Bill charges"): every stored
-- version of each (location, month, tariff key), with the fingerprint of its month's reach
-- it was measured under, one row per demand entry (entry from 1, of n: a scalar scans
-- without the array's per-element reflection), in no order (sorting cost more than the
-- read). The reader keeps the latest version of each, as ReplacingMergeTree does: a year
-- of 1,000 locations' months cost ClickHouse 18.16 about 9 ms of CPU read so and 15 ms
-- grouped by argMax, and merged parts hold one version of almost every month. Only tariff
-- keys starting with @kept_prefix (peaks kept under the reach fingerprints
-- month_prints.sql reads).
SELECT location_id, toUInt32(month_start) AS month, tariff_key, readings_seen AS seen, version,
    toUInt32(length(peaks)) AS n, arrayJoin(arrayEnumerate(peaks)) AS entry, peaks[entry] AS peak
FROM demand_peaks
WHERE account_id = @account AND live_mode = @live AND location_id IN (SELECT location_id FROM _locs) AND direction = @dir
    AND month_start >= toDateTime(@m0) AND month_start <= toDateTime(@m1)
    AND substring(tariff_key, 1, length(@kept_prefix)) = @kept_prefix
