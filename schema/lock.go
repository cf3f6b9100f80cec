package schema

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kwhouse/kwhouse/chstore"
)

// Locker takes a lock every kwhouse process of a deployment sees (Redis). Hold returns
// ErrHeld while another holder has the lock, and ok=false when the lock service is down;
// the lock is kept until release is called, however long that takes.
type Locker interface {
	Hold(ctx context.Context, key string) (release func(), ok bool, err error)
}

// ErrHeld is what a Locker returns while another process holds the lock.
var ErrHeld = errors.New("lock held by another process")

// TooNewError is the refusal to serve a database whose schema has migrations this kwhouse
// does not know: an older binary after an upgrade elsewhere.
type TooNewError struct{ Applied, Known int }

func (e *TooNewError) Error() string {
	return fmt.Sprintf("the database's schema is at migration %d, newer than this kwhouse knows (up to %d): run the kwhouse release that migrated it, or a later one", e.Applied, e.Known)
}

// Pending returns the migrations not yet applied to db, in order; a *TooNewError when db
// has one this kwhouse does not know.
func Pending(ctx context.Context, db *chstore.DB) ([]Migration, error) {
	form := Form{Cluster: db.Cluster, Database: db.Database}
	migs, err := Migrations(form)
	if err != nil {
		return nil, err
	}
	if err := ensureBookkeeping(ctx, db, form); err != nil {
		return nil, err
	}
	done, err := applied(ctx, db)
	if err != nil {
		return nil, err
	}
	known := migs[len(migs)-1].Version
	for v := range done {
		if v > known {
			return nil, &TooNewError{Applied: v, Known: known}
		}
	}
	var out []Migration
	for _, m := range migs {
		if !done[m.Version] {
			out = append(out, m)
		}
	}
	return out, nil
}

// lockKey names the migration lock of db's database.
func lockKey(db *chstore.DB) string { return "schema-migrate:" + db.Database }

// ApplyLocked applies the pending migrations under the deployment's migration lock: of
// several processes starting together one migrates and the others wait for it, then find
// nothing pending. With the lock service down and migrations pending it refuses (nothing
// would keep two processes from running them at once) and names the command that
// migrates on its own; with nothing pending it needs no lock.
func ApplyLocked(ctx context.Context, db *chstore.DB, log *slog.Logger, locker Locker) error {
	waiting := false
	for {
		pending, err := Pending(ctx, db)
		if err != nil || len(pending) == 0 {
			return err
		}
		release, ok, err := locker.Hold(ctx, lockKey(db))
		switch {
		case errors.Is(err, ErrHeld):
			if !waiting {
				log.Info("another kwhouse process is migrating the schema; waiting for it", "database", db.Database)
				waiting = true
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
			continue
		case err != nil:
			return fmt.Errorf("migration lock: %w", err)
		case !ok:
			return fmt.Errorf("%d schema migrations are pending (from %04d_%s) and Redis, which keeps two processes from running them at once, is down: run `kwhouse migrate` once, then start the service",
				len(pending), pending[0].Version, pending[0].Name)
		}
		err = Apply(ctx, db, log) // reads what is applied again: another process may have finished first
		release()
		return err
	}
}
