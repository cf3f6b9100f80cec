package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// secretPrefix starts every signing secret, as the Standard Webhooks libraries expect.
const secretPrefix = "whsec_"

// secretBytes is the length of a signing key (the Standard Webhooks range is 24 to 64).
const secretBytes = 32

// NewSecret returns a fresh signing secret: whsec_ and the base64 of 32 random bytes.
func NewSecret() string {
	var b [secretBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("webhooks: crypto/rand failed: " + err.Error()) // never happens on Linux
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// Headers are the Standard Webhooks headers of one delivery attempt.
type Headers struct {
	ID        string // webhook-id: the event id, the same on every attempt
	Timestamp string // webhook-timestamp: Unix seconds of the attempt
	Signature string // webhook-signature: v1,<base64 HMAC-SHA256>
}

// Sign signs body for the message id at t with secret: the HMAC-SHA256, keyed with the
// secret's decoded bytes, of "id.timestamp.body".
func Sign(secret, id string, t time.Time, body []byte) (Headers, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return Headers{}, fmt.Errorf("decode signing secret: %w", err)
	}
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return Headers{ID: id, Timestamp: ts, Signature: "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))}, nil
}
