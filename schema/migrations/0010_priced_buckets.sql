-- Priced fleet buckets and the change records that say when one is stale (docs/costs.md,
-- "Priced buckets"). Every table here is sharded like meter_records, by location, so a
-- location's buckets and change records live on the shard of its readings.

-- How many meter record rows were ever written per (location or device, direction, UTC
-- date of start_time). A counter, never decreasing: a bucket priced under some counts is
-- unchanged exactly while they are (a re-sent reading adds a row, so it counts too).
-- Counts, not times, so that processes whose clocks disagree cannot hide a write.
CREATE TABLE IF NOT EXISTS {{table "reading_changes"}} {{.OnCluster}}
(
    account_id  String,
    live_mode   UInt8,
    location_id String,
    device_id   String,
    direction   Enum8('IMPORT' = 1, 'EXPORT' = 2),
    day         Date,
    n           UInt64,
    -- The latest version counted: not summed, it only keeps two equal counts of one grain
    -- from being one block that a Replicated table drops as a repeat (block deduplication).
    last_version UInt64
)
ENGINE = {{engine "SummingMergeTree" "n"}}
PARTITION BY toYYYYMM(day)
ORDER BY (account_id, live_mode, location_id, device_id, direction, day);

{{distributed "reading_changes"}};

-- Every writer of meter_records (API, NDJSON stream, kwhouse ingest, import) inserts
-- through the table, so this view counts every row written. ClickHouse writes the table
-- before the view: a row may be visible before it is counted, which is why a pricer reads
-- the counts before it prices (a bucket is then stale, never wrong). On a cluster the view
-- sits on each shard's local table and writes that shard's counts (a replica fetching a
-- part runs no view: each row is counted once).
{{template "reading_changes_mv" .}};

-- The rows stored before the view existed (a row inserted meanwhile may count twice: a
-- count only has to change when the rows do).
INSERT INTO reading_changes (account_id, live_mode, location_id, device_id, direction, day, n, last_version)
SELECT account_id, live_mode, location_id, device_id, direction, toDate(start_time) AS day, toUInt64(count()), max(version)
FROM meter_records
GROUP BY account_id, live_mode, location_id, device_id, direction, day;

-- Writes that change what a location's records cost, counted per UTC date they touch
-- (day 1970-01-01: every date, e.g. a tariff write, which can change extrapolated
-- confidence at any time). Written by kwhouse after the write they record succeeded.
CREATE TABLE IF NOT EXISTS {{table "price_changes"}} {{.OnCluster}}
(
    account_id  String,
    live_mode   UInt8,
    location_id String,
    day         Date,
    n           UInt64,
    version     UInt64 -- not summed: see reading_changes.last_version
)
ENGINE = {{engine "SummingMergeTree" "n"}}
ORDER BY (account_id, live_mode, location_id, day);

{{distributed "price_changes"}};

-- A location's (or device's) records of one direction starting in one local day, priced:
-- energy, money, confidence, and the change counts it was priced under (readings_seen,
-- prices_seen; read before pricing). The latest version of a bucket counts. A window that
-- starts or ends inside a local day keeps that part of the day as a bucket of its own,
-- under its bounds (span_from, span_to; both 0 for a whole day).
CREATE TABLE IF NOT EXISTS {{table "priced_buckets"}} {{.OnCluster}}
(
    account_id          String,
    live_mode           UInt8,
    location_id         String,
    device_id           String,
    direction           Enum8('IMPORT' = 1, 'EXPORT' = 2),
    day                 Date,
    span_from           UInt32,
    span_to             UInt32,
    day_start           DateTime('UTC'),
    zone                String,
    tiered              UInt8,
    empty               UInt8,
    n_import            UInt64,
    n_export            UInt64,
    energy_wh           Float64,
    money               Float64,
    money_commodity     Float64,
    money_non_commodity Float64,
    confidence          Float64,
    readings_seen       UInt64,
    prices_seen         UInt64,
    version             UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYYYYMM(day)
ORDER BY (account_id, live_mode, location_id, device_id, direction, day, span_from, span_to);

{{distributed "priced_buckets"}};
