-- Cumulative register readings (PUT /meters/cumulative/epoch), kept so that the next
-- request continues from the register's last reading. value_wh is the register in Wh.
CREATE TABLE IF NOT EXISTS meter_registers {{.OnCluster}}
(
    account_id  String,
    live_mode   UInt8,
    location_id String,
    device_id   String,
    direction   Enum8('IMPORT' = 1, 'EXPORT' = 2),
    tariff_rate Enum8('IMPORT' = 1, 'EXPORT' = 2, 'LOCAL' = 3),
    time        DateTime('UTC'),
    value_wh    Float64,
    version     UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYYYYMM(time)
ORDER BY (account_id, live_mode, location_id, device_id, direction, tariff_rate, time);
