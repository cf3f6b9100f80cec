package schedules

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/query"
)

// Request is FlatPeak's ScheduleCreate body.
type Request struct {
	LocationID       string          `json:"location_id"`
	MaxPower         *Quantity       `json:"max_power"`
	ShavingThreshold *Threshold      `json:"shaving_threshold"`
	Data             []DeviceRequest `json:"data"`
}

// DeviceRequest is one device's need.
type DeviceRequest struct {
	DeviceID  string    `json:"device_id"`
	Direction string    `json:"direction"`
	StartTime *string   `json:"start_time"`
	EndTime   *string   `json:"end_time"`
	MaxPower  *Quantity `json:"max_power"`
	Energy    *Quantity `json:"energy"`
}

// Quantity is {units, value}: a power (W, KW) or an energy (WH, KWH).
type Quantity struct {
	Units string `json:"units"`
	Value Number `json:"value"`
}

// Number is a finite number sent as a JSON number or, as FlatPeak's document has the
// location's max_power value, a numeric string.
type Number float64

// UnmarshalJSON implements json.Unmarshaler.
func (n *Number) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("want a finite number, got %s", b)
	}
	*n = Number(f)
	return nil
}

// MarshalJSON implements json.Marshaler: a number, rounded as every amount is.
func (n Number) MarshalJSON() ([]byte, error) { return query.Amount(n).MarshalJSON() }

// Threshold is FlatPeak's shaving_threshold: prices beyond it are not used.
type Threshold struct {
	Relative *float64 `json:"relative,omitempty"` // (0, 1] of the window's price range
	Absolute *float64 `json:"absolute,omitempty"` // a price; overrides relative
}

// Schedule is FlatPeak's Schedule: the plan of every device and its money.
type Schedule struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	LiveMode         bool              `json:"live_mode"`
	LocationID       string            `json:"location_id"`
	LocationTimezone string            `json:"location_timezone"`
	CurrencyCode     string            `json:"currency_code"`
	MaxPower         Quantity          `json:"max_power"`
	ShavingThreshold *Threshold        `json:"shaving_threshold,omitempty"`
	Objective        string            `json:"objective"`               // kwhouse's own
	CarbonWeight     *float64          `json:"carbon_weight,omitempty"` // kwhouse's own
	Tariff           Money             `json:"tariff"`
	Savings          Savings           `json:"savings"`
	Carbon           *Carbon           `json:"carbon,omitempty"` // include_carbon
	Data             []DeviceSchedule  `json:"data"`
	TimeCreated      catalog.Timestamp `json:"time_created"`
	AccountID        string            `json:"account_id"`
}

// Money is a sum of money and the confidence of its prices.
type Money struct {
	Value      query.Amount `json:"value"`
	Confidence query.Amount `json:"confidence"`
}

// Savings is what a plan saves against running flat out from the window's start.
type Savings struct {
	Value      query.Amount `json:"value"`
	Percentage query.Amount `json:"percentage"`
}

// Carbon is the grid carbon of a plan's energy (kwhouse's own).
type Carbon struct {
	Units      string       `json:"units"`
	Value      query.Amount `json:"value"`
	Confidence query.Amount `json:"confidence"`
}

// DeviceSchedule is one device's plan.
type DeviceSchedule struct {
	DeviceID  string    `json:"device_id"`
	Direction string    `json:"direction"`
	StartTime string    `json:"start_time"`
	EndTime   string    `json:"end_time"`
	MaxPower  *Quantity `json:"max_power,omitempty"`
	Energy    Quantity  `json:"energy"`
	Shortfall Quantity  `json:"shortfall"` // kwhouse's own: energy the plan cannot deliver
	Tariff    Money     `json:"tariff"`
	Savings   Savings   `json:"savings"`
	Carbon    *Carbon   `json:"carbon,omitempty"`
	Schedule  []Entry   `json:"schedule"`
}

// Entry is a stretch of constant power.
type Entry struct {
	StartTime string   `json:"start_time"`
	EndTime   string   `json:"end_time"`
	Power     Quantity `json:"power"`
}
