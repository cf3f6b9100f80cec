-- Interval meter records. The sorting key identifies a reading: a re-sent reading (same
-- key) replaces the earlier one, the row of highest version winning; reads use FINAL
-- with filters on key columns only, or argMax by version.
-- Partitioned by UTC day of start_time (data management); never by location: inserts may
-- touch at most 100 partitions, and the writer splits blocks to stay under that.
CREATE TABLE IF NOT EXISTS {{table "meter_records"}} {{.OnCluster}}
(
    account_id           String,
    live_mode            UInt8,
    location_id          String,
    device_id            String,
    direction            Enum8('IMPORT' = 1, 'EXPORT' = 2),
    tariff_rate          Enum8('IMPORT' = 1, 'EXPORT' = 2, 'LOCAL' = 3),
    start_time           DateTime('UTC'),
    end_time             DateTime('UTC'),
    energy_wh            Float64,
    confidence           Float64,
    session_reference_id String,
    record_reference_id  String,
    batch_id             String,
    version              UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYYYYMMDD(start_time)
ORDER BY (account_id, live_mode, location_id, device_id, direction, tariff_rate, start_time, end_time);

-- On a cluster the records live in meter_records_local, sharded by location through this
-- Distributed table (nothing on one node).
{{distributed "meter_records"}};

-- One row per accepted PUT /meters/interval or /meters/cumulative/epoch request.
CREATE TABLE IF NOT EXISTS meter_batches {{.OnCluster}}
(
    account_id        String,
    live_mode         UInt8,
    id                String,
    records_submitted UInt32,
    records_accepted  UInt32,
    records_processed UInt32,
    failed_records    String,
    time_created      DateTime('UTC')
)
ENGINE = {{engine "ReplacingMergeTree" ""}}
PARTITION BY toYYYYMM(time_created)
ORDER BY (account_id, live_mode, id);

-- When kwhouse last took a reading of each device.
CREATE TABLE IF NOT EXISTS device_last_seen {{.OnCluster}}
(
    account_id String,
    live_mode  UInt8,
    device_id  String,
    last_seen  DateTime('UTC')
)
ENGINE = {{engine "ReplacingMergeTree" "last_seen"}}
ORDER BY (account_id, live_mode, device_id);
