package query

import (
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
)

func TestDirtyHintsRememberMostlyDirtyScopesForAWhile(t *testing.T) {
	h := newDirtyHints()
	a, b := kwhouse.Scope{AccountID: "acc_a"}, kwhouse.Scope{AccountID: "acc_b"}
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	h.note(a, 49, 100, t0) // under half: first reads stay worth it
	if h.mostlyDirty(a, t0) {
		t.Fatal("49 of 100 dirty locations made the scope mostly dirty")
	}
	h.note(a, 50, 100, t0)
	if !h.mostlyDirty(a, t0.Add(dirtyHintTTL-time.Second)) {
		t.Fatal("50 of 100 dirty locations were not remembered")
	}
	if h.mostlyDirty(b, t0) || h.mostlyDirty(kwhouse.Scope{AccountID: "acc_a", LiveMode: true}, t0) {
		t.Fatal("another scope took the hint")
	}
	if h.mostlyDirty(a, t0.Add(dirtyHintTTL)) {
		t.Fatal("the hint outlived its TTL")
	}
	h.note(b, 3, 3, t0.Add(dirtyHintTTL))
	if _, kept := h.seen[a]; kept {
		t.Fatal("an expired scope stayed in the map")
	}
	h.note(b, 0, 0, t0) // an empty batch says nothing
}
