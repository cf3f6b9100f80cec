package webhooks_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// standardWebhooksJS is the npm package the node check uses, pinned.
const standardWebhooksJS = "standardwebhooks@1.1.1"

// nodeVerifier returns a check that verifies a delivery with the npm standardwebhooks
// package under node, installed once into the user's cache directory; it skips the
// check (saying why) when node or npm is missing or the package cannot be installed.
func nodeVerifier(t *testing.T) func(secret string, h http.Header, body []byte) error {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Log("node not found: the check with the npm standardwebhooks package is skipped")
		return nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Logf("no cache directory (%v): the node check is skipped", err)
		return nil
	}
	dir := filepath.Join(cache, "kwhouse-test", "standardwebhooks")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks")); err != nil {
		out, err := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, standardWebhooksJS).CombinedOutput()
		if err != nil {
			t.Logf("npm install %s failed (%v): the node check is skipped\n%s", standardWebhooksJS, err, out)
			return nil
		}
	}
	script := `const { Webhook } = require("standardwebhooks");
let input = ""; process.stdin.on("data", d => input += d).on("end", () => {
  const m = JSON.parse(input);
  try { new Webhook(m.secret).verify(Buffer.from(m.body, "base64"), m.headers); process.stdout.write("ok"); }
  catch (e) { process.stdout.write(String(e)); process.exit(1); }
});`
	return func(secret string, h http.Header, body []byte) error {
		in, _ := json.Marshal(map[string]any{"secret": secret, "body": base64.StdEncoding.EncodeToString(body),
			"headers": map[string]string{"webhook-id": h.Get("webhook-id"), "webhook-timestamp": h.Get("webhook-timestamp"),
				"webhook-signature": h.Get("webhook-signature")}})
		cmd := exec.Command(node, "-e", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
		cmd.Stdin = bytes.NewReader(in)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return &nodeError{out: string(out), err: err}
		}
		return nil
	}
}

type nodeError struct {
	out string
	err error
}

func (e *nodeError) Error() string {
	return "node standardwebhooks: " + e.out + " (" + e.err.Error() + ")"
}
