package kwhouse

import "math"

// Value ranges of stored numbers (docs/api.md, "Value ranges"). They are far beyond real
// data, and small enough that every sum and product a cost query forms of them stays a
// finite number: energy × price × (1 + surcharge) of a year of readings is below 1e25.
const (
	// MaxEnergyWh bounds the energy of one reading (or of one register step): 1 TWh.
	MaxEnergyWh = 1e12
	// MaxRegisterWh bounds a cumulative register reading: a meter counter runs for decades.
	MaxRegisterWh = 1e15
	// MaxPrice bounds a price per kWh, of either sign: a tariff's fixed, a surcharge_fixed
	// or a market price, in the currency's main unit.
	MaxPrice = 1e6
	// MaxSurchargePercent bounds a surcharge_percentage, of either sign.
	MaxSurchargePercent = 1e4
	// MaxTierKWh bounds a band's to_kwh.
	MaxTierKWh = 1e9
	// MaxIntensity bounds a carbon intensity in grams CO2e per kWh.
	MaxIntensity = 1e6
)

// Within reports whether v is a number (not NaN or infinite) with |v| ≤ limit.
func Within(v, limit float64) bool { return math.Abs(v) <= limit }
