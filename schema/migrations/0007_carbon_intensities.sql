-- Grid carbon-intensity series (gCO2e per kWh), stored as market prices are: once per
-- series, shared by every location that uses it. A re-sent interval (same series and
-- start) replaces the old one.
CREATE TABLE IF NOT EXISTS carbon_intensities {{.OnCluster}}
(
    account_id String,
    live_mode  UInt8,
    series_id  String,
    start_time DateTime('UTC'),
    end_time   DateTime('UTC'),
    intensity  Float64,
    version    UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYYYYMM(start_time)
ORDER BY (account_id, live_mode, series_id, start_time);
