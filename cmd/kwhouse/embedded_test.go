package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse/embedded"
)

// asCLI makes the test binary the kwhouse command (its arguments are the command's), for
// tests that need another process: an embedded directory belongs to one process.
const asCLI = "KWHOUSE_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		root := newRoot()
		root.SetArgs(os.Args[1:])
		if err := root.ExecuteContext(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "kwhouse:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// otherProcess runs the command in a process of its own and returns its stdout and stderr.
func otherProcess(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLI+"=1", "KWHOUSE_LOG_LEVEL=warn")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func TestEmbeddedDirectoryRefusesASecondProcess(t *testing.T) {
	dir := t.TempDir()
	held, err := embedded.Lock(dir) // this process is the first kwhouse on dir
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, err := otherProcess(t, "--embedded", dir, "accounts", "list")
	want := fmt.Sprintf("%s is used by another kwhouse process (pid %d)", dir, os.Getpid())
	if err == nil || !strings.Contains(stderr, want) {
		t.Fatalf("second process on a held directory: err %v, stderr %q; want a refusal saying %q", err, stderr, want)
	}
	held.Close()
	_, stderr, err = otherProcess(t, "--embedded", dir, "accounts", "list")
	if strings.Contains(stderr, "used by another kwhouse process") {
		t.Fatalf("the directory is still refused once released: %s", stderr)
	}
	if embedded.WithChDB && err != nil {
		t.Fatalf("accounts list on the released directory: %v\n%s", err, stderr)
	}
	if !embedded.WithChDB && !strings.Contains(stderr, "built without chDB") {
		t.Fatalf("a binary without chDB: stderr %q, want it to say it cannot run embedded", stderr)
	}
}

func TestEmbeddedRestartKeepsData(t *testing.T) {
	if !embedded.WithChDB {
		t.Skip("needs a binary built with the chdb tag (make test-embedded)")
	}
	dir := t.TempDir()
	out, stderr, err := otherProcess(t, "--embedded", dir, "accounts", "create", "--name", "kept", "--json")
	if err != nil {
		t.Fatalf("accounts create: %v\n%s", err, stderr)
	}
	var created struct {
		AccountID string `json:"account_id"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.AccountID == "" {
		t.Fatalf("accounts create printed %q: %v", out, err)
	}
	out, stderr, err = otherProcess(t, "--embedded", dir, "accounts", "list", "--json")
	if err != nil {
		t.Fatalf("accounts list after a restart: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, created.AccountID) || !strings.Contains(out, `"kept"`) {
		t.Fatalf("after a restart the account %s is gone: %s", created.AccountID, out)
	}
}
