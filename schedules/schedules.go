// Package schedules plans when a location's devices draw (or export) their energy: the
// cheapest plan for all of them together under the location's power cap, priced by the
// location's own price timeline, stored so it can be read back (POST /schedules,
// GET /schedules/{id}; docs/schedules.md).
package schedules

import (
	"context"
	"fmt"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
	"github.com/kwhouse/kwhouse/docstore"
	"github.com/kwhouse/kwhouse/query"
)

// KindSchedule is the document kind of stored schedules.
const KindSchedule = "schedule"

// Objectives: what a plan minimises.
const (
	ObjectiveCost   = "cost"   // money (import) or lost earnings (export)
	ObjectiveCarbon = "carbon" // grid grams CO2e
	ObjectiveBlend  = "blend"  // money + carbon_weight × grams
)

// Limits bound a request (config "schedules").
type Limits struct {
	Horizon    time.Duration // a window may end at most this long after now
	MaxDevices int           // devices in one request
}

// Service plans and stores schedules.
type Service struct {
	catalog *catalog.Catalog
	pricer  *query.Pricer
	docs    *docstore.Store
	placed  *placements
	limits  Limits
	now     func() time.Time
}

// New returns a Service that prices plans with pricer, keeps them in docs and reads
// where devices report from in db.
func New(cat *catalog.Catalog, pricer *query.Pricer, docs *docstore.Store, db *chstore.DB, limits Limits, now func() time.Time) *Service {
	return &Service{catalog: cat, pricer: pricer, docs: docs, placed: newPlacements(db), limits: limits, now: now}
}

// Options are kwhouse's own choices beside FlatPeak's body (query parameters).
type Options struct {
	Objective     string   // cost (default), carbon or blend
	CarbonWeight  *float64 // money per gram CO2e, for blend
	IncludeCarbon bool     // add the plan's grams CO2e
}

// Create plans the request, stores the schedule and returns it.
func (s *Service) Create(ctx context.Context, scope kwhouse.Scope, req Request, opt Options) (Schedule, error) {
	now := s.now().UTC().Truncate(time.Second)
	need, err := s.resolve(ctx, scope, req, opt, now)
	if err != nil {
		return Schedule{}, err
	}
	out, err := s.plan(ctx, scope, need)
	if err != nil {
		return Schedule{}, err
	}
	out.ID, out.Object, out.LiveMode, out.AccountID = kwhouse.NewID(kwhouse.PrefixSchedule), "schedule", scope.LiveMode, scope.AccountID
	out.TimeCreated = catalog.Timestamp(now)
	doc := docstore.Doc{Kind: KindSchedule, ID: out.ID, Scope: scope, CreatedUS: s.now().UnixMicro(),
		Fields: docstore.Fields{LocationID: out.LocationID}}
	if doc, err = docstore.WithBody(doc, out); err != nil {
		return Schedule{}, err
	}
	if err := s.docs.Write(ctx, doc); err != nil {
		return Schedule{}, fmt.Errorf("store schedule %s: %w", out.ID, err)
	}
	return out, nil
}

// Get returns a stored schedule.
func (s *Service) Get(ctx context.Context, scope kwhouse.Scope, id string) (Schedule, error) {
	if !kwhouse.ValidID(kwhouse.PrefixSchedule, id) {
		return Schedule{}, kwhouse.NotFound("id", id)
	}
	doc, err := s.docs.Get(ctx, scope, KindSchedule, id)
	if err != nil {
		return Schedule{}, err
	}
	var out Schedule
	return out, doc.DecodeBody(&out)
}
