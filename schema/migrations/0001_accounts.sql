-- Accounts and their API keys. Keys are stored only as SHA-256 hashes.
CREATE TABLE IF NOT EXISTS accounts {{.OnCluster}}
(
    id           String,
    name         String,
    time_created DateTime('UTC'),
    version      UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "version"}}
ORDER BY id;

-- One row per key; the hash is the lookup key of every authenticated request.
CREATE TABLE IF NOT EXISTS api_keys {{.OnCluster}}
(
    key_hash     String,
    account_id   String,
    live_mode    UInt8,
    time_created DateTime('UTC')
)
ENGINE = {{engine "ReplacingMergeTree" ""}}
ORDER BY key_hash;
