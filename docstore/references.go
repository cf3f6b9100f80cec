package docstore

import (
	"context"
	"fmt"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/chstore"
)

// The subquery finds the few ids that ever carried one of the references (the column is
// in every version); the outer query keeps those whose current version still does.
var referenceOwnersStmt = chstore.Register("docstore.reference_owners", `SELECT id,
	argMax(reference_id, version) AS cur_reference_id
FROM documents
WHERE account_id = ? AND live_mode = ? AND kind = ? AND id IN (
	SELECT id FROM documents WHERE account_id = ? AND live_mode = ? AND kind = ? AND reference_id IN ?)
GROUP BY id
HAVING argMax(deleted, version) = 0 AND cur_reference_id IN ?`)

// ReferenceOwners returns, for each of refs that a current document of kind in scope
// carries as its reference_id, the id of that document.
func (s *Store) ReferenceOwners(ctx context.Context, scope kwhouse.Scope, kind string, refs []string) (map[string]string, error) {
	owners := map[string]string{}
	for from := 0; from < len(refs); from += inChunk {
		part := chstore.Set(refs[from:min(from+inChunk, len(refs))])
		live := scope.LiveByte()
		rows, err := s.db.Query(ctx, referenceOwnersStmt, scope.AccountID, live, kind, scope.AccountID, live, kind, part, part)
		if err != nil {
			return nil, fmt.Errorf("look up %s reference ids: %w", kind, err)
		}
		for rows.Next() {
			var id, ref string
			if err := rows.Scan(&id, &ref); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read %s reference ids: %w", kind, err)
			}
			owners[ref] = id
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("look up %s reference ids: %w", kind, err)
		}
	}
	return owners, nil
}
