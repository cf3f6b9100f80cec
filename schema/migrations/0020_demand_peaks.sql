-- Demand peaks kept per location, tariff and local month (docs/costs.md, "Bill charges"):
-- the highest mean power of each demand entry of a tariff over the month's intervals, and
-- the reading change count (reading_changes) of the month's UTC dates it was measured
-- under, read before measuring. Peaks are served while that count is the current one; the
-- latest version of a row counts. Sharded by location like meter_records and
-- reading_changes.
CREATE TABLE IF NOT EXISTS {{table "demand_peaks"}} {{.OnCluster}}
(
    account_id    String,
    live_mode     UInt8,
    location_id   String,
    direction     Enum8('IMPORT' = 1, 'EXPORT' = 2),
    -- The local month's start (in the tariff's zone) and what the peaks are measured by:
    -- a hash of the tariff's id, zone, contract and demand entries.
    month_start   DateTime('UTC'),
    tariff_key    String,
    peaks         Array(Float64),
    readings_seen UInt64,
    version       UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYYYYMM(month_start)
ORDER BY (account_id, live_mode, location_id, direction, month_start, tariff_key);

{{distributed "demand_peaks"}};
