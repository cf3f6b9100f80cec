package ingest

import (
	"math/rand/v2"
	"testing"
)

// Failures arriving in any order keep the first keep by record number, and count all.
func TestFailuresKeepTheFirstByRecordNumber(t *testing.T) {
	nums := rand.New(rand.NewPCG(1, 2)).Perm(10_000)
	fs := failures{keep: 100}
	for _, n := range nums {
		fs.add(FailedRecord{RecordNum: n})
	}
	got := firstFailed(fs.kept, fs.keep)
	if fs.count != 10_000 || len(got) != 100 {
		t.Fatalf("count %d, kept %d; want 10000 and 100", fs.count, len(got))
	}
	for i, f := range got {
		if f.RecordNum != i {
			t.Fatalf("kept[%d] = %d, want %d", i, f.RecordNum, i)
		}
	}
	all := failures{} // keep 0: every one (the bulk loader's reject file)
	for _, n := range nums[:500] {
		all.add(FailedRecord{RecordNum: n})
	}
	if len(firstFailed(all.kept, 0)) != 500 {
		t.Errorf("keep 0 kept %d of 500", len(all.kept))
	}
}

// A batch built from several chunks lists the first failures of all of them.
func TestBatchListsTheFirstFailuresAcrossChunks(t *testing.T) {
	var b Batch
	for c := 0; c < 3; c++ {
		p := newParsed(0, 5)
		for i := 0; i < 10; i++ {
			p.fail(c*10+i, "", "bad")
		}
		b.add(p)
	}
	if b.FailedRecordsCount != 30 || len(b.FailedRecords) != 5 || b.FailedRecords[4].RecordNum != 4 || b.RecordsAccepted != 0 {
		t.Errorf("batch %+v", b)
	}
}
