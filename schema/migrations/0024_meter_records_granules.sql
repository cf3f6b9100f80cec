-- Meter records in granules of 1,024 rows instead of 8,192 (0008). A month partition holds
-- a location's half-hour readings of the month in about 1,440 rows, so a read of some of a
-- fleet's locations, or of one location, read whole granules that mostly held other
-- locations: on 18.16, the tiered statement of a cold fleet month by DAY (100 of 1,000
-- locations, every tenth) took 246 ms of CPU against 402 ms, its reading 54 against 138
-- ms; the untiered statement of the other 900 and the bare sum of every location, which
-- read nearly every row, the same either way (docs/benchmarks.md, "Cold"). 18.16 cannot
-- change the granules in place, so the table is copied as 0008 copied it, and the views
-- that count its rows (0010, 0021) are made again on the copy: current ClickHouse keeps a
-- view on the table it was made on, not on its name.
--
-- Stop ingest while this runs, as for 0008. Rows written meanwhile are still not lost:
-- once the views are back, the rows of the last 15 minutes before the swap that only one
-- of the two tables holds are inserted into the new one, through its views. Safe to re-run
-- after a failure before the RENAME; after it, run the statements after the RENAME by
-- hand (on a cluster, then drop meter_records_8k_local ON CLUSTER), and record version 24
-- in schema_migrations.
DROP TABLE IF EXISTS {{table "meter_records_8k"}} {{.OnCluster}};

-- Same columns, partitions and sorting as meter_records; only the granules differ.
CREATE TABLE IF NOT EXISTS {{table "meter_records_1k"}} {{.OnCluster}} AS {{qualified (table "meter_records")}}
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYYYYMM(start_time)
ORDER BY (account_id, live_mode, location_id, device_id, direction, tariff_rate, start_time, end_time)
SETTINGS index_granularity = 1024;

-- On a cluster the copy is written through a Distributed table of its own, to the
-- shard of each location (nothing on one node).
{{distributed "meter_records_1k"}};

INSERT INTO meter_records_1k SELECT * FROM meter_records;

RENAME TABLE {{table "meter_records"}} TO {{table "meter_records_8k"}}, {{table "meter_records_1k"}} TO {{table "meter_records"}} {{.OnCluster}};

DROP TABLE IF EXISTS reading_changes_mv {{.OnCluster}};

{{template "reading_changes_mv" .}};

DROP TABLE IF EXISTS reading_changes_by_month_mv {{.OnCluster}};

{{template "reading_changes_by_month_mv" .}};

-- The copy's Distributed table on a cluster (on one node the name is gone: renamed), and
-- the old table's, read below.
DROP TABLE IF EXISTS meter_records_1k {{.OnCluster}};

{{distributed "meter_records_8k"}};

-- The rows that reached the new table before its views were back (those the old table
-- lacks), counted now; then the rows that reached the old table after the copy (those
-- the new one lacks). The rows of the last 15 minutes before the swap are compared by a
-- hash of each (8 bytes a row: on 18.16, with a bulk load of 17.5 M rows just before,
-- each statement took 0.57 GB and 4 s so, 6.3 GB and 50 s comparing the rows whole).
INSERT INTO meter_records SELECT * FROM meter_records
WHERE version + 900000000000 > (SELECT max(version) FROM meter_records_8k)
    AND cityHash64({{template "record_key"}}) {{if .OnCluster}}GLOBAL {{end}}NOT IN (SELECT cityHash64({{template "record_key"}}) FROM meter_records_8k
        WHERE version + 900000000000 > (SELECT max(version) FROM meter_records_8k));

INSERT INTO meter_records SELECT * FROM meter_records_8k
WHERE version + 900000000000 > (SELECT max(version) FROM meter_records_8k)
    AND cityHash64({{template "record_key"}}) {{if .OnCluster}}GLOBAL {{end}}NOT IN (SELECT cityHash64({{template "record_key"}}) FROM meter_records
        WHERE version + 900000000000 > (SELECT max(version) FROM meter_records_8k));

-- The old table's Distributed table on a cluster, then the old table.
DROP TABLE IF EXISTS meter_records_8k {{.OnCluster}};

DROP TABLE IF EXISTS {{table "meter_records_8k"}} {{.OnCluster}};
