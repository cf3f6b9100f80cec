// Package httpapi is kwhouse's HTTP API: the Gin router, authentication, the error
// format, paging, metrics and the OpenAPI document. Handlers are thin: they parse the
// request, call a domain package and hand its result to one response writer.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/accounts"
	"github.com/kwhouse/kwhouse/carbon"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/connect"
	"github.com/kwhouse/kwhouse/ingest"
	"github.com/kwhouse/kwhouse/limits"
	"github.com/kwhouse/kwhouse/query"
	"github.com/kwhouse/kwhouse/schedules"
	"github.com/kwhouse/kwhouse/tariffs"
	"github.com/kwhouse/kwhouse/webhooks"
)

// Checker reports whether a backing store answers.
type Checker interface {
	Ping(ctx context.Context) error
}

// Deps are the parts the API serves from.
type Deps struct {
	Accounts           *accounts.Store
	Tokens             *accounts.Tokens
	Catalog            *catalog.Catalog
	ClickHouse         Checker
	Redis              Checker
	Log                *slog.Logger
	Registry           *prometheus.Registry
	MaxBodyBytes       int64
	Now                func() time.Time
	Ingest             *ingest.Service
	Tariffs            *tariffs.Service
	Pricer             *query.Pricer
	Schedules          *schedules.Service
	Connect            *connect.Service
	Carbon             *carbon.Store
	Limits             *limits.Limits
	Webhooks           *webhooks.Service
	IngestMaxBodyBytes int64
	// IngestStreamFrom and IngestStreamChunk: NDJSON bodies over IngestStreamFrom bytes
	// (or of unknown length) are stored as they arrive, IngestStreamChunk bytes at a time.
	IngestStreamFrom  int64
	IngestStreamChunk int
	// SeriesMaxBodyBytes bounds a body of prices, intensities or register readings (after
	// gzip); UploadTimeout is how long any upload may take to be read and answered.
	SeriesMaxBodyBytes int64
	UploadTimeout      time.Duration
	// WriteTimeout is http.write_timeout: an admitted cost query's answer is due that long
	// after its turn began.
	WriteTimeout time.Duration
	// LocationDeleteHooks remove what belongs to a location when it is deleted.
	LocationDeleteHooks []catalog.LocationDeleteHook
}

// Server holds the router and its dependencies.
type Server struct {
	deps    Deps
	engine  *gin.Engine
	metrics *metrics
}

// New builds the router with every route.
func New(d Deps) *Server {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	s := &Server{deps: d, engine: e, metrics: newMetrics(d.Registry)}
	e.Use(s.requestID, s.recover, s.logRequests, s.metrics.middleware)
	e.NoRoute(s.wrap(func(c *gin.Context) (int, any, error) {
		return 0, nil, &kwhouse.Error{Kind: kwhouse.KindNotFound, Code: "route_not_found",
			Message: "no route " + c.Request.Method + " " + c.Request.URL.Path}
	}))
	e.NoMethod(s.wrap(func(c *gin.Context) (int, any, error) {
		return 0, nil, errMethodNotAllowed(c.Request.Method, c.Request.URL.Path)
	}))
	s.routes()
	return s
}

// Handler returns the http.Handler of the API.
func (s *Server) Handler() http.Handler { return s.engine }

// Routes lists every method and path the API serves.
func (s *Server) Routes() gin.RoutesInfo { return s.engine.Routes() }

func (s *Server) routes() {
	e := s.engine
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metrics.handler())
	e.GET("/openapi.json", s.openAPI)
	e.GET("/login", s.wrap(s.login))
	e.GET("/dashboard", s.dashboardFile) // the page has no data: its API calls carry the key
	e.GET("/dashboard/:file", s.dashboardFile)

	// Meter pushes are charged by records (in ingest), everything else by requests.
	// Uploads have their own, larger body limits and ingest.body_timeout (uploadTime).
	// Each upload holds one of its account's upload turns while it is read and stored
	// (admitUpload).
	m := e.Group("/meters", s.authenticate)
	m.PUT("/interval", s.admitUpload, s.uploadTime, s.wrap(s.putInterval))
	m.PUT("/cumulative/epoch", s.admitUpload, s.uploadTime, s.wrap(s.putCumulative))
	m.GET("/batch", s.limitRequests, s.wrap(s.getBatch))
	e.PUT("/markets/:id/prices", s.authenticate, s.limitRequests, s.admitUpload, s.uploadTime, s.wrap(s.putMarketPrices))
	e.PUT("/carbon/series/:id/intensities", s.authenticate, s.limitRequests, s.admitUpload, s.uploadTime, s.wrap(s.putCarbonIntensities))

	// The customer's connect page: the token in the path is its credential.
	page := e.Group("/connect/tariff/pages/:account/:mode/:token", s.pageScope, s.limitRequests, s.limitBody(s.deps.MaxBodyBytes))
	page.GET("", s.connectPage)
	page.POST("", s.connectPage)

	a := e.Group("/", s.authenticate, s.limitRequests, s.limitBody(s.deps.MaxBodyBytes))
	a.POST("/customers", s.wrap(s.createCustomer))
	a.GET("/customers", s.wrap(s.listCustomers))
	a.GET("/customers/:id", s.wrap(s.getCustomer))
	a.PATCH("/customers/:id", s.wrap(s.updateCustomer))
	a.DELETE("/customers/:id", s.wrap(s.deleteCustomer))

	a.POST("/locations", s.wrap(s.createLocation))
	a.GET("/locations", s.wrap(s.listLocations))
	a.GET("/locations/:id", s.wrap(s.getLocation))
	a.PATCH("/locations/:id", s.wrap(s.updateLocation))
	a.DELETE("/locations/:id", s.wrap(s.deleteLocation))
	a.GET("/locations/:id/status", s.admitRead, s.wrap(s.locationStatus)) // prices three days

	a.POST("/devices", s.wrap(s.createDevice))
	a.GET("/devices", s.wrap(s.listDevices))
	a.GET("/devices/:id", s.wrap(s.getDevice))
	a.PATCH("/devices/:id", s.wrap(s.updateDevice))
	a.DELETE("/devices/:id", s.wrap(s.deleteDevice))

	a.POST("/tariffs/elements", s.wrap(s.createTariff))
	a.GET("/tariffs/elements", s.wrap(s.listTariffs))
	a.GET("/tariffs/elements/:id", s.wrap(s.getTariff))
	a.PATCH("/tariffs/elements/:id", s.wrap(s.updateTariff))
	a.DELETE("/tariffs/elements/:id", s.wrap(s.deleteTariff))
	a.POST("/markets", s.wrap(s.createMarket))
	a.GET("/markets/:id", s.wrap(s.getMarket))
	a.POST("/carbon/series", s.wrap(s.createCarbonSeries))
	a.GET("/carbon/series/:id", s.wrap(s.getCarbonSeries))
	a.POST("/costs/interval/:id", s.admitQuery, s.wrap(s.costInterval))
	a.POST("/costs/session/:id", s.admitQuery, s.wrap(s.costSession))
	a.POST("/costs/fleet", s.admitQuery, s.costFleet)
	a.POST("/costs/instant", s.wrap(s.costInstant))
	a.GET("/tariffs/rates/:id", s.admitRead, s.wrap(s.tariffRates))
	a.GET("/tariffs/audit/:id", s.admitRead, s.wrap(s.tariffAudit))
	a.GET("/slots/threshold/:id", s.admitRead, s.wrap(s.slotsThreshold))
	a.GET("/slots/time/:id", s.admitRead, s.wrap(s.slotsTime))
	a.POST("/connect/tariff/token", s.wrap(s.createConnectToken))
	a.GET("/connect/tariff/token", s.wrap(s.exchangeConnectToken))
	a.POST("/connect/tariff/batch", s.wrap(s.connectBatch))
	a.POST("/schedules", s.admitRead, s.wrap(s.createSchedule))
	a.GET("/schedules/:id", s.wrap(s.getSchedule))

	a.GET("/events", s.wrap(s.listEvents))
	a.GET("/events/:id", s.wrap(s.getEvent))

	a.POST("/webhooks", s.wrap(s.createWebhook))
	a.GET("/webhooks", s.wrap(s.listWebhooks))
	a.GET("/webhooks/:id", s.wrap(s.getWebhook))
	a.PATCH("/webhooks/:id", s.wrap(s.updateWebhook))
	a.DELETE("/webhooks/:id", s.wrap(s.deleteWebhook))
	a.POST("/webhooks/:id/rotate_secret", s.wrap(s.rotateWebhookSecret))
	a.POST("/webhooks/:id/test", s.wrap(s.testWebhook))
	a.GET("/webhooks/:id/deliveries", s.wrap(s.listWebhookAttempts))
	a.POST("/webhooks/:id/deliveries/:delivery_id/resend", s.wrap(s.resendWebhook))
}

// handlerFunc returns a status and body, or an error for the one error writer.
type handlerFunc func(c *gin.Context) (int, any, error)

func (s *Server) wrap(h handlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		status, body, err := h(c)
		if err != nil {
			s.writeError(c, err)
			return
		}
		s.writeJSON(c, status, body)
	}
}

func scopeOf(c *gin.Context) kwhouse.Scope {
	sc, _ := kwhouse.ScopeFrom(c.Request.Context())
	return sc
}
