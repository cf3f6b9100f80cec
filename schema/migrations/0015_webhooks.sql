-- Webhook delivery (docs/webhooks.md). The documents table stays the outbox: every event
-- is written there in the same block as its change. This view copies each event, as it is
-- inserted, into webhook_outbox, sorted by creation time, so the dispatcher reads "events
-- since t" as a range of the sorting key instead of scanning every account's documents
-- (sorted by account and id). On a cluster the view fires on the node that takes the
-- insert and webhook_outbox replicates the copy to the others.
CREATE TABLE IF NOT EXISTS webhook_outbox {{.OnCluster}}
(
    created_us UInt64,
    id         String,
    account_id String,
    live_mode  UInt8,
    event_type String,
    body       String
)
ENGINE = {{engine "ReplacingMergeTree" ""}}
PARTITION BY toYYYYMM(toDateTime(intDiv(created_us, 1000000), 'UTC'))
ORDER BY (created_us, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS webhook_outbox_feed {{.OnCluster}} TO {{qualified "webhook_outbox"}}
AS SELECT created_us, id, account_id, live_mode, event_type, body
FROM {{qualified "documents"}}
WHERE kind = 'event';

-- One row per delivery state: attempt 0 when the delivery is created (an event for an
-- endpoint, or a resend), then one row per attempt with its outcome. The current state of
-- a delivery is its row with the highest attempt. Sorted by endpoint so an endpoint's
-- attempts are one range, and a delivery is found by (endpoint_id, delivery_id).
-- Partitioned by the delivery's creation day: the sweep for due retries reads only the
-- last few days.
CREATE TABLE IF NOT EXISTS webhook_deliveries {{.OnCluster}}
(
    day         Date,
    endpoint_id String,
    delivery_id String,
    attempt     UInt16,
    attempt_id  String,
    account_id  String,
    live_mode   UInt8,
    event_id    String,
    event_type  String,
    created_us  UInt64,
    time_us     UInt64,
    state       String,
    status_code UInt16,
    duration_ms UInt32,
    error       String,
    next_us     UInt64
)
ENGINE = {{engine "ReplacingMergeTree" ""}}
PARTITION BY day
ORDER BY (endpoint_id, delivery_id, attempt);

-- How far the dispatchers have turned outbox events into deliveries; the highest
-- position wins. A restarted process reads the outbox from here (less an overlap).
CREATE TABLE IF NOT EXISTS webhook_cursor {{.OnCluster}}
(
    name     String,
    position UInt64
)
ENGINE = {{engine "ReplacingMergeTree" "position"}}
ORDER BY name;
