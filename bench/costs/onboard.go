package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kwhouse/kwhouse/app"
	"github.com/kwhouse/kwhouse/catalog"
	"github.com/kwhouse/kwhouse/chstore"
)

// onboard creates a location and its tariff in the fleet's account (a customer onboarded
// elsewhere in it) and returns the location's id.
func onboard(ctx context.Context, a *app.App, fx *fixture) (string, error) {
	tz, cur := "Europe/London", "GBP"
	l, err := a.Catalog.CreateLocation(ctx, fx.scope, catalog.LocationInput{Timezone: &tz, CurrencyCode: &cur})
	if err != nil {
		return "", fmt.Errorf("onboard a location: %w", err)
	}
	if _, err := a.Tariffs.Create(ctx, fx.scope, tariffOf(kindTOU, l.ID, fx.market)); err != nil {
		return "", fmt.Errorf("onboard a tariff: %w", err)
	}
	return l.ID, nil
}

// offboard deletes an onboarded location as DELETE /locations/{id} does (its tariffs with
// it, its kept sums by mutation) and waits for those mutations, so that they do not run
// during the next timed request.
func offboard(ctx context.Context, a *app.App, fx *fixture, id string) error {
	if err := a.Catalog.DeleteLocation(ctx, fx.scope, id, a.Tariffs.OnLocationDelete); err != nil {
		return fmt.Errorf("delete onboarded location %s: %w", id, err)
	}
	return waitMutations(ctx, a, id)
}

// cleanOnboarded deletes the locations of the fixture's account that are not the
// fixture's: those an onboarding shape of an earlier run left (before it deleted them).
func cleanOnboarded(ctx context.Context, a *app.App, fx *fixture) error {
	all, err := a.Catalog.LocationInfos(ctx, fx.scope, "")
	if err != nil {
		return fmt.Errorf("locations of the fixture's account: %w", err)
	}
	mine := slices.Clone(fx.locations)
	slices.Sort(mine)
	n := 0
	for _, l := range all {
		if _, ok := slices.BinarySearch(mine, l.ID); ok {
			continue
		}
		if err := offboard(ctx, a, fx, l.ID); err != nil {
			return err
		}
		n++
	}
	if n > 0 {
		fmt.Printf("deleted %d locations earlier runs onboarded\n", n)
	}
	return nil
}

// waitMutations waits (at most 30 s) until ClickHouse has run the deletes of location
// id's kept sums: the last one (priced_months) is listed and none is left to run.
func waitMutations(ctx context.Context, a *app.App, id string) error {
	q := chstore.Tool(`SELECT countIf(table LIKE 'priced_months%'), countIf(is_done = 0) FROM system.mutations
		WHERE database = currentDatabase() AND position(command, ?) > 0`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var last, running uint64
		if err := a.DB.QueryRow(ctx, q, id).Scan(&last, &running); err != nil {
			return fmt.Errorf("mutations of a deleted location: %w", err)
		}
		if last > 0 && running == 0 {
			return nil
		}
	}
	fmt.Printf("the deletes of location %s's kept sums are still running after 30 s\n", id)
	return nil
}
