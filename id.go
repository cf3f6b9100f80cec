package kwhouse

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Identifier prefixes, one per resource type.
const (
	PrefixAccount  = "acc_"
	PrefixCustomer = "cus_"
	PrefixLocation = "loc_"
	PrefixDevice   = "dev_"
	PrefixTariff   = "trf_"
	PrefixProvider = "prv_"
	PrefixEvent    = "evt_"
	PrefixCost     = "ecs_"
	PrefixSlot     = "slt_"
	PrefixBatch    = "bat_"
	PrefixRates    = "rts_"
	PrefixMarket   = "mrs_"
	PrefixCarbon   = "cis_" // carbon-intensity series
	PrefixSchedule = "sch_"
	PrefixWebhook  = "whe_" // webhook endpoint
	PrefixDelivery = "whd_" // webhook delivery of one event to one endpoint
	PrefixAttempt  = "wha_" // one attempt of a webhook delivery
)

// NewID returns prefix followed by 24 lowercase hex characters from a CSPRNG.
func NewID(prefix string) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("kwhouse: crypto/rand failed: " + err.Error()) // never happens on Linux
	}
	return prefix + hex.EncodeToString(b[:])
}

// ValidID reports whether id has the given prefix followed by 24 lowercase hex characters.
func ValidID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || len(rest) != 24 {
		return false
	}
	// A table instead of range tests: random hex digits defeat the branch predictor, and
	// the ingest path checks an id per record.
	valid := true
	for i := 0; i < len(rest); i++ {
		valid = valid && lowerHex[rest[i]]
	}
	return valid
}

var lowerHex = func() (t [256]bool) {
	for _, c := range "0123456789abcdef" {
		t[c] = true
	}
	return t
}()
