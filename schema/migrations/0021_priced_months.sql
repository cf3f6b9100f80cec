-- Priced months (docs/costs.md, "Priced buckets", priced months): a location's whole local month of a MONTH
-- or NONE answer kept as one row, with fingerprints of the change counts it depends on.
-- Sharded by location like the readings and buckets (migration 0010).

-- A fingerprint of the meter record rows written per (location or device, direction) over
-- each month's reach: the UTC dates [first day - 4 days, last day + 2 days] (every date a
-- change count of that local month comes from, in any zone: ReachMonths in
-- chstore/fingerprint.go). n counts the rows; print sums each row's date's day_weight
-- (UInt64, wraps), so print changes whenever one date's count does. A date lies in the
-- reach of one month or two and is counted in each. Summed, never decreasing, like
-- reading_changes.
CREATE TABLE IF NOT EXISTS {{table "reading_changes_by_month"}} {{.OnCluster}}
(
    account_id  String,
    live_mode   UInt8,
    location_id String,
    device_id   String,
    direction   Enum8('IMPORT' = 1, 'EXPORT' = 2),
    month       Date,
    n           UInt64,
    print       UInt64,
    -- Not summed: see reading_changes.last_version.
    last_version UInt64
)
ENGINE = {{engine "SummingMergeTree" "(n, print)"}}
PARTITION BY toYear(month)
ORDER BY (account_id, live_mode, location_id, device_id, direction, month);

{{distributed "reading_changes_by_month"}};

-- Every writer of meter_records inserts through the table, so this view counts every row
-- written, as reading_changes_mv does (on a cluster on each shard's local table).
{{template "reading_changes_by_month_mv" .}};

-- The counts stored before the view existed, from reading_changes (a row inserted
-- meanwhile may count twice: its months then never match the counts a month was priced
-- under and are summed from their buckets, as without priced months).
INSERT INTO reading_changes_by_month (account_id, live_mode, location_id, device_id, direction, month, n, print, last_version)
SELECT account_id, live_mode, location_id, device_id, direction, arrayJoin({{reach_months "day"}}) AS month,
    sum(n), sum(n * {{day_weight "day"}}), max(last_version)
FROM reading_changes
GROUP BY account_id, live_mode, location_id, device_id, direction, month;

-- A whole local month of a location (or device) and direction as a MONTH answer sums its
-- priced buckets (energy, money, confidence, record counts; served: its non-empty days),
-- kept when count_months verified every bucket of the month, with the fingerprints of the
-- counts of the month's reach it was verified under (readings_print, prices_print: the
-- location's dated price changes; prices_every: its changes of every date), read in that
-- same statement. Served while the fingerprints now equal them, in the same zone and
-- tiering. The latest version counts.
CREATE TABLE IF NOT EXISTS {{table "priced_months"}} {{.OnCluster}}
(
    account_id          String,
    live_mode           UInt8,
    location_id         String,
    device_id           String,
    direction           Enum8('IMPORT' = 1, 'EXPORT' = 2),
    month               Date,
    zone                String,
    tiered              UInt8,
    served              UInt64,
    n_import            UInt64,
    n_export            UInt64,
    energy_wh           Float64,
    money               Float64,
    money_commodity     Float64,
    money_non_commodity Float64,
    confidence          Float64,
    readings_print      UInt64,
    prices_print        UInt64,
    prices_every        UInt64,
    version             UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYear(month)
ORDER BY (account_id, live_mode, location_id, device_id, direction, month);

{{distributed "priced_months"}};
