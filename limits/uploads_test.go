package limits

import (
	"context"
	"testing"
	"time"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/config"
)

// One account's upload turns: a full account waits, a second waiter beyond its turns'
// count is refused at once, another account is admitted meanwhile, and a freed turn goes
// to the waiting upload.
func TestUploadTurnsArePerAccount(t *testing.T) {
	l := newTestLimits(config.Limits{AccountUploads: 1, UploadWait: 2 * time.Second}, &fakeRates{ok: true})
	ctx := context.Background()
	first, err := l.EnterUpload(ctx, "acc_a")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		turn, err := l.EnterUpload(ctx, "acc_a")
		if turn != nil {
			defer turn.Done(ctx, false, true)
		}
		got <- err
	}()
	waitFor(t, func() bool { l.uploads.mu.Lock(); defer l.uploads.mu.Unlock(); return l.uploads.waiting["acc_a"] == 1 })
	start := time.Now()
	if _, err := l.EnterUpload(ctx, "acc_a"); codeOf(err) != "too_many_uploads" || time.Since(start) > time.Second {
		t.Fatalf("a third upload of acc_a with one running and one waiting: %v after %s, want too_many_uploads at once", err, time.Since(start))
	}
	other, err := l.EnterUpload(ctx, "acc_b")
	if err != nil {
		t.Fatalf("another account beside a full one: %v", err)
	}
	other.Done(ctx, false, true)
	first.Done(ctx, false, true)
	if err := <-got; err != nil {
		t.Fatalf("the waiting upload once a turn ended: %v", err)
	}
}

// Past the refused-upload rate an account pays before its body is read: refused at once
// while the Retry-After runs; a paid upload that is refused again is not charged twice;
// a stored upload ends the suspicion.
func TestRefusedUploadsMakeAnAccountPayFirst(t *testing.T) {
	r := &fakeRates{ok: false}
	l := newTestLimits(config.Limits{RefusedUploadsPerMinute: 30, RefusedUploadBurst: 30}, r)
	ctx := context.Background()
	turn, err := l.EnterUpload(ctx, "acc_a")
	if err != nil || len(r.keys) != 0 {
		t.Fatalf("an account never refused: %v, %d rate checks; want admitted without one", err, len(r.keys))
	}
	turn.Done(ctx, true, false) // the bucket is spent: acc_a is suspect for 1.5 s
	if _, err := l.EnterUpload(ctx, "acc_a"); codeOf(err) != "too_many_refused_uploads" || len(r.keys) != 1 {
		t.Fatalf("the next upload within Retry-After: %v after %d rate checks, want too_many_refused_uploads without a check", err, len(r.keys))
	}
	if _, err := l.EnterUpload(ctx, "acc_b"); err != nil {
		t.Fatalf("another account: %v", err)
	}
	l.uploads.suspect["acc_a"] = time.Now().Add(-time.Second) // the Retry-After has passed
	r.ok = true
	turn, err = l.EnterUpload(ctx, "acc_a")
	if err != nil || !turn.paid || len(r.keys) != 2 {
		t.Fatalf("after Retry-After: %v (paid %v, %d checks), want admitted having paid", err, turn != nil && turn.paid, len(r.keys))
	}
	turn.Done(ctx, true, false)
	if len(r.keys) != 2 {
		t.Errorf("a paid upload refused again was charged again: %d checks", len(r.keys))
	}
	turn, _ = l.EnterUpload(ctx, "acc_a")
	turn.Done(ctx, false, true)
	if _, suspect := l.uploads.suspect["acc_a"]; suspect {
		t.Error("a stored upload left the account suspect")
	}
}

func codeOf(err error) string {
	if e := kwhouse.AsError(err); e != nil {
		return e.Code
	}
	return ""
}
