package query

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// sqlComments are SQL line comments and template comments: what a rule says, not does.
var sqlComments = regexp.MustCompile(`(?s)--[^\n]*|\{\{-? */\*.*?\*/ *-?\}\}`)

// TestEachMoneyRuleIsWrittenOnce requires every money rule (docs/costs.md, "Where each
// money rule is written") to stand in exactly one place of the cost SQL, so that every
// cost answer — interval, session, instant, fleet, priced buckets — prices by it: a
// second copy of a rule is a second way to price that a test would have to keep equal.
func TestEachMoneyRuleIsWrittenOnce(t *testing.T) {
	code := map[string]string{} // file → SQL without comments
	err := fs.WalkDir(sqlFiles, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sqlFiles, path)
		code[path] = sqlComments.ReplaceAllString(string(b), "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rules := []struct {
		rule, written, where string
		n                    int // uses in where; none in any other file
	}{
		{"the latest version of a reading", "argMax(energy_wh", "readings.sql", 1},
		{"a reading's tariff rate", "multiIf(tariff_rate", "readings.sql", 1},
		{"surcharges on a market price", "surcharge", "cost_segments.sql", 0},
		{"surcharges on a market price", "(1 + p / 100)", "cost_segments.sql", 1},
		{"untiered price: kWh × price (the untieredMoney template function)", "/ 1000", "", 0},
		{"uncovered time → confidence 0 (the uncovered template function)", "0., 1.)", "", 0},
		{"tier pieces: counters per tier period (counterEnds)", "counterEnds", "fleet.sql", 1},
		{"tier pieces: money per band (bandMoney)", "bandMoney", "fleet.sql", 1},
	}
	for _, r := range rules {
		for file, sql := range code {
			want := 0
			if file == r.where {
				want = r.n
			}
			if got := strings.Count(sql, r.written); got != want && (r.n > 0 || file != r.where) {
				t.Errorf("%s: %q is written %d times in %s, want %d", r.rule, r.written, got, file, want)
			}
		}
	}
}
