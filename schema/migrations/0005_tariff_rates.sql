-- A tariff's schedule expanded into UTC periods (tariffs.expand), in calendar-year chunks
-- written on demand; the cost and rate queries join meter records against these. Band
-- arrays are parallel: band_hi is each band's upper bound in Wh counted from the tier
-- period start (the last is +inf); prices are per kWh in major currency units.
CREATE TABLE IF NOT EXISTS tariff_rates {{.OnCluster}}
(
    account_id String,
    live_mode  UInt8,
    tariff_id  String,
    start_time DateTime('UTC'),
    end_time   DateTime('UTC'),
    tier_start DateTime('UTC'),
    band_hi    Array(Float64),
    band_fixed Array(Float64),
    band_sfix  Array(Float64),
    band_spct  Array(Float64),
    market_id  String,
    version    UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
ORDER BY (account_id, live_mode, tariff_id, start_time);

-- Which calendar years of a tariff are expanded.
CREATE TABLE IF NOT EXISTS tariff_rate_years {{.OnCluster}}
(
    account_id String,
    live_mode  UInt8,
    tariff_id  String,
    year       UInt16
)
ENGINE = {{engine "ReplacingMergeTree" ""}}
ORDER BY (account_id, live_mode, tariff_id, year);

-- Market price series, stored once per market and shared by every tariff following it.
-- A re-sent interval (same market and start) replaces the old price.
CREATE TABLE IF NOT EXISTS market_prices {{.OnCluster}}
(
    account_id String,
    live_mode  UInt8,
    market_id  String,
    start_time DateTime('UTC'),
    end_time   DateTime('UTC'),
    price      Float64,
    confidence Float64,
    version    UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYYYYMM(start_time)
ORDER BY (account_id, live_mode, market_id, start_time);
