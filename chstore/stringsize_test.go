package chstore

import "testing"

func TestArmedSizesAreTakenOnceAndWithdrawn(t *testing.T) {
	a := &armedSizes{armed: map[string][]armedSize{}}
	if c := a.take("location_id"); cap(c.Buf) != 0 || cap(c.Pos) != 0 {
		t.Fatalf("unarmed column sized %d/%d", cap(c.Buf), cap(c.Pos))
	}
	disarm := a.arm([]StringSize{{Column: "location_id", Rows: 10, Bytes: 280}, {Column: "batch_id", Rows: 10, Bytes: 0}})
	other := a.arm([]StringSize{{Column: "location_id", Rows: 3, Bytes: 84}})
	c := a.take("location_id")
	if cap(c.Buf) != 280 || cap(c.Pos) != 10 || len(c.Buf) != 0 || len(c.Pos) != 0 {
		t.Errorf("first location_id column: len %d/%d cap %d/%d, want empty with room for 280 bytes, 10 rows",
			len(c.Buf), len(c.Pos), cap(c.Buf), cap(c.Pos))
	}
	disarm() // batch_id was not taken: it must not size a later column
	if c := a.take("batch_id"); cap(c.Pos) != 0 {
		t.Errorf("withdrawn size still handed out: cap %d", cap(c.Pos))
	}
	if c := a.take("location_id"); cap(c.Pos) != 3 {
		t.Errorf("the other insert's location_id size: cap %d, want 3", cap(c.Pos))
	}
	other()
	if len(a.armed) != 0 {
		t.Errorf("sizes left armed: %v", a.armed)
	}
}
