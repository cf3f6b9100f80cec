-- Documents are read one id, or one location's tariffs, at a time; with 8,192-row
-- granules every such read decompressed the bodies of thousands of documents (28 ms for
-- one get among 4,000 tariffs and locations, 5 ms with 256-row granules). 18.16 cannot
-- change index_granularity in place, so the table is copied. Safe to re-run after a
-- failure at any step: the leftover old table is dropped first, and a copy made twice
-- holds each version twice, which the latest-version reads already collapse.
DROP TABLE IF EXISTS documents_g8192 {{.OnCluster}};

-- Same columns as documents (AS documents); only the granules differ.
CREATE TABLE IF NOT EXISTS documents_g256 {{.OnCluster}} AS {{qualified "documents"}}
ENGINE = {{engine "ReplacingMergeTree" "version"}}
ORDER BY (account_id, live_mode, kind, id)
SETTINGS index_granularity = 256;

INSERT INTO documents_g256 SELECT * FROM documents;

RENAME TABLE documents TO documents_g8192, documents_g256 TO documents {{.OnCluster}};

DROP TABLE IF EXISTS documents_g8192 {{.OnCluster}};
