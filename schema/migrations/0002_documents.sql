-- Metadata documents (customers, locations, devices, tariffs, markets) and events: one row
-- per version, latest version wins, deletes are tombstones. Events live in the same table so
-- that a change and its event are one insert block, stored together or not at all.
-- No PARTITION BY: a block spanning two partitions would be two parts, no longer atomic.
CREATE TABLE IF NOT EXISTS documents {{.OnCluster}}
(
    account_id   String,
    live_mode    UInt8,
    kind         String,
    id           String,
    version      UInt64,
    deleted      UInt8,
    created_us   UInt64,
    reference_id String,
    customer_id  String,
    location_id  String,
    object_id    String,
    event_type   String,
    direction    String,
    tariff_type  String,
    body         String
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
ORDER BY (account_id, live_mode, kind, id);
