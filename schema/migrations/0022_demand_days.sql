-- What a kept month of demand peaks (demand_peaks) is measured again from (docs/costs.md,
-- "Bill charges"): the peaks of each local day of the month (day_peaks: days × entries, day
-- by day from its first), the reading change count of each UTC date of the month's reach
-- read before measuring them (reach_counts: reading_changes, from 4 days before its first
-- day), and the longest reading measured (seconds). A later measurement reads again only
-- the days from the first date whose count changed. The latest version of a row counts;
-- sharded by location and partitioned like demand_peaks (0023: a year's keeps write one part,
-- not twelve).
CREATE TABLE IF NOT EXISTS {{table "demand_days"}} {{.OnCluster}}
(
    account_id   String,
    live_mode    UInt8,
    location_id  String,
    direction    Enum8('IMPORT' = 1, 'EXPORT' = 2),
    month_start  DateTime('UTC'),
    tariff_key   String,
    day_peaks    Array(Float64),
    reach_counts Array(UInt64),
    longest      UInt32,
    version      UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYear(month_start)
ORDER BY (account_id, live_mode, location_id, direction, month_start, tariff_key)
SETTINGS index_granularity = 256;

{{distributed "demand_days"}};
