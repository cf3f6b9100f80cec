package webhooks

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/kwhouse/kwhouse"
)

// retryAfter is the wait before each retry: after the first attempt fails the second
// comes 5 s later, and so on; a delivery whose 8th attempt fails has failed. This is the
// Standard Webhooks schedule the API promises (docs/webhooks.md), not a tuning constant.
var retryAfter = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// maxAttempts is the first attempt and every retry.
var maxAttempts = uint16(len(retryAfter) + 1)

// nextAttempt returns when the attempt after attempt n (1-based) is due, or false when
// attempt n was the last.
func nextAttempt(n uint16, at time.Time) (time.Time, bool) {
	if n >= maxAttempts {
		return time.Time{}, false
	}
	return at.Add(retryAfter[n-1]), true
}

// sweepLookback is how far back, in deliveries' creation days, the sweep looks for due
// retries: the whole schedule (under 28 h) with days to spare for a stopped service.
const sweepLookback = 7 * 24 * time.Hour

// deliveryID is the id of an event's delivery to an endpoint: derived from both, so every
// process that reads the event from the outbox makes the same delivery, stored once.
func deliveryID(endpointID, eventID string) string {
	sum := sha256.Sum256([]byte(endpointID + "/" + eventID))
	return kwhouse.PrefixDelivery + hex.EncodeToString(sum[:12])
}
