package catalog

// Tariff slot states.
const (
	StatusConnected    = "CONNECTED"
	StatusError        = "ERROR"
	StatusNotConnected = "NOT_CONNECTED"
	StatusNotSupported = "NOT_SUPPORTED"
)

// TariffStatus is a location's state of each tariff slot.
type TariffStatus struct {
	CommodityImport    string `json:"commodity_import"`
	CommodityExport    string `json:"commodity_export"`
	NonCommodityImport string `json:"non_commodity_import"`
	NonCommodityExport string `json:"non_commodity_export"`
	Local              string `json:"local"`
}

// DisconnectedStatus is the status of a location without tariffs.
func DisconnectedStatus() TariffStatus {
	return TariffStatus{CommodityImport: StatusNotConnected, CommodityExport: StatusNotConnected,
		NonCommodityImport: StatusNotConnected, NonCommodityExport: StatusNotSupported, Local: StatusNotSupported}
}

// StatusDetail is one slot of GET /locations/{id}/status.
type StatusDetail struct {
	Status         string          `json:"status"`
	ConnectionType string          `json:"connection_type,omitempty"`
	Provider       *StatusProvider `json:"provider,omitempty"`
	Tariff         *StatusTariff   `json:"tariff,omitempty"`
}

// StatusProvider names a tariff's provider.
type StatusProvider struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	LogoURL     string `json:"logo_url"`
}

// StatusTariff summarises the tariff in force in a slot.
type StatusTariff struct {
	ID              string     `json:"id"`
	DisplayName     string     `json:"display_name"`
	StructureType   string     `json:"structure_type"`
	ContractEndDate *Timestamp `json:"contract_end_date,omitempty"`
}

// LocationStatus is the body of GET /locations/{id}/status.
type LocationStatus struct {
	ID            string                   `json:"id"`
	Object        string                   `json:"object"`
	LiveMode      bool                     `json:"live_mode"`
	ReferenceID   string                   `json:"reference_id,omitempty"`
	CustomerID    string                   `json:"customer_id,omitempty"`
	Timezone      string                   `json:"timezone"`
	CurrencyCode  string                   `json:"currency_code"`
	PostalAddress *PostalAddress           `json:"postal_address,omitempty"`
	GeoLocation   *GeoLocation             `json:"geo_location,omitempty"`
	TariffStatus  map[string]*StatusDetail `json:"tariff_status"`
	TimeCreated   Timestamp                `json:"time_created"`
	AccountID     string                   `json:"account_id"`
}

func statusDetails(lt LocationTariffs) map[string]*StatusDetail {
	out := map[string]*StatusDetail{}
	for slot, st := range map[string]string{
		"commodity_import": lt.Status.CommodityImport, "commodity_export": lt.Status.CommodityExport,
		"non_commodity_import": lt.Status.NonCommodityImport, "non_commodity_export": lt.Status.NonCommodityExport,
		"local": lt.Status.Local,
	} {
		if d := lt.Detail[slot]; d != nil {
			out[slot] = d
			continue
		}
		out[slot] = &StatusDetail{Status: st}
	}
	return out
}
