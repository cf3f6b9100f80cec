package query

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/kwhouse/kwhouse"
)

// cursorOf is the next_cursor after row r: every figure rows are ordered by, so the next
// page starts right after r whatever the order.
func cursorOf(r FleetRow) string {
	b, _ := json.Marshal([]string{strconv.FormatFloat(r.money, 'g', -1, 64), strconv.FormatFloat(r.wh, 'g', -1, 64),
		r.key.group, r.key.date, r.key.currency})
	return base64.RawURLEncoding.EncodeToString(b)
}

// parseCursor reads a next_cursor ("" is none).
func parseCursor(s string) (FleetRow, error) {
	if s == "" {
		return FleetRow{}, nil
	}
	bad := kwhouse.Invalid("invalid_cursor", "starting_after", "starting_after must be the next_cursor of an earlier page")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return FleetRow{}, bad
	}
	var parts []string
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) != 5 {
		return FleetRow{}, bad
	}
	money, err1 := strconv.ParseFloat(parts[0], 64)
	wh, err2 := strconv.ParseFloat(parts[1], 64)
	if err1 != nil || err2 != nil {
		return FleetRow{}, bad
	}
	return FleetRow{money: money, wh: wh, key: fleetKey{group: parts[2], date: parts[3], currency: parts[4]}}, nil
}
