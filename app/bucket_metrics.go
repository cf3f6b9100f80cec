package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kwhouse/kwhouse/query"
)

// registerBucketMetrics puts the priced buckets' counts, the answer cache's and the
// background pricer's lag on /metrics (docs/costs.md, "Priced buckets", "Answer cache").
func registerBucketMetrics(reg *prometheus.Registry, p *query.Pricer, bp *query.BucketPricer) {
	counts := map[string]func(query.BucketCounts) int64{
		"served":        func(c query.BucketCounts) int64 { return c.Served },
		"priced":        func(c query.BucketCounts) int64 { return c.Priced },
		"invalidated":   func(c query.BucketCounts) int64 { return c.Invalidated },
		"writes_failed": func(c query.BucketCounts) int64 { return c.WritesFailed },
	}
	help := map[string]string{
		"served":        "Priced fleet buckets served as stored (their records and prices unchanged).",
		"priced":        "Fleet day buckets priced and written back (stale, or never priced).",
		"invalidated":   "Stored fleet buckets found stale (a reading or price they depend on changed).",
		"writes_failed": "Write-backs of priced buckets or measured demand peaks that failed after their answer was sent (priced or measured again later).",
	}
	for name, get := range counts {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kwhouse_fleet_buckets_" + name + "_total",
			Help: help[name]}, func() float64 { return float64(get(p.BucketCounts())) }))
	}
	answers := map[string]func(query.AnswerCounts) int64{
		"served":   func(c query.AnswerCounts) int64 { return c.Served },
		"computed": func(c query.AnswerCounts) int64 { return c.Computed },
	}
	answersHelp := map[string]string{
		"served":   "Fleet answers served from the answer cache (computed under the state token there is now).",
		"computed": "Fleet answers computed while the answer cache is on (no entry, or one of another state).",
	}
	for name, get := range answers {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kwhouse_fleet_answers_" + name + "_total",
			Help: answersHelp[name]}, func() float64 { return float64(get(p.AnswerCounts())) }))
	}
	if bp != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kwhouse_bucket_pricer_lag_seconds",
			Help: "Age of the oldest change the background pricer may not have priced yet: time since its last complete pass began."},
			func() float64 { return bp.Lag().Seconds() }))
	}
}
