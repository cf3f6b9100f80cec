-- Demand peaks partitioned by year with 256-row granules instead of by month with 8,192
-- (0020). A keep of a location's year (a backfilled location's answer, a pricer pass)
-- writes a part into each of twelve monthly partitions, so between merges one location's
-- read of its kept year opened a dozen to sixty parts and read every row of each (each
-- smaller than a granule): on 18.16, with a location's year kept anew before each read,
-- 8.3 ms of CPU against 1.3 ms so (one part to read, one granule of it); a year of 1,000
-- locations 7.1 against 4.0 ms; one month of 1,000 locations (a live fleet's re-measured
-- month) 2.7 against 3.7 ms (docs/benchmarks.md, "Bill charges"). 18.16 cannot change
-- PARTITION BY or the granules in place, so the table is copied as 0008 copies
-- meter_records: a keep written between the copy and the rename stays behind, which
-- costs another process a measurement of that month, never a wrong bill (docs/costs.md,
-- "Bill charges"). Safe to re-run after a failure at any step on one node, and up to the
-- RENAME on a cluster (a copy made twice holds each version twice, which the read
-- collapses); on a cluster after the RENAME, the live table holds the copy's ZooKeeper
-- path: drop demand_peaks_by_month_local ON CLUSTER by hand and record version 23 in
-- schema_migrations.
DROP TABLE IF EXISTS {{table "demand_peaks_by_month"}} {{.OnCluster}};

-- Same columns and sorting as demand_peaks; only the partitions and the granules differ.
CREATE TABLE IF NOT EXISTS {{table "demand_peaks_by_year"}} {{.OnCluster}} AS {{qualified (table "demand_peaks")}}
ENGINE = {{engine "ReplacingMergeTree" "version"}}
PARTITION BY toYear(month_start)
ORDER BY (account_id, live_mode, location_id, direction, month_start, tariff_key)
SETTINGS index_granularity = 256;

-- On a cluster the copy is written through a Distributed table of its own, to the
-- shard of each location (nothing on one node).
{{distributed "demand_peaks_by_year"}};

INSERT INTO demand_peaks_by_year SELECT * FROM demand_peaks;

RENAME TABLE {{table "demand_peaks"}} TO {{table "demand_peaks_by_month"}}, {{table "demand_peaks_by_year"}} TO {{table "demand_peaks"}} {{.OnCluster}};

-- The copy's Distributed table on a cluster (on one node the name is gone: renamed).
DROP TABLE IF EXISTS demand_peaks_by_year {{.OnCluster}};

DROP TABLE IF EXISTS {{table "demand_peaks_by_month"}} {{.OnCluster}};
