-- What a month's demand peaks are measured again from (docs/costs.md, "Bill charges"): the
-- peaks of each local day of the month (day_peaks: days × entries, day by day, from its
-- first; empty where kept without them), the reading change count of each UTC date of the
-- month's reach read before measuring (reach_counts: from 4 days before its first day),
-- and the longest reading measured (seconds). A later measurement reads again only the
-- days from the first changed date on.
ALTER TABLE {{table "demand_peaks"}} {{.OnCluster}}
    ADD COLUMN day_peaks Array(Float64), ADD COLUMN reach_counts Array(UInt64), ADD COLUMN longest UInt32;

{{if .OnCluster}}ALTER TABLE demand_peaks {{.OnCluster}}
    ADD COLUMN day_peaks Array(Float64), ADD COLUMN reach_counts Array(UInt64), ADD COLUMN longest UInt32{{end}};
