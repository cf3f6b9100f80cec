package strictjson

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kwhouse/kwhouse"
)

type item struct {
	A *int `json:"a"`
}

var errTooMany = errors.New("too many")

func bound(n int) Bound { return Bound{Max: n, TooMany: func() error { return errTooMany }} }

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// An array over the bound stops at its first element too many: the rest of a huge body is
// never read.
func TestDecodeArrayStopsAtTheBound(t *testing.T) {
	body := "[" + strings.Repeat(`{"a":1},`, 1_000_000) + `{"a":1}]`
	cr := &countingReader{r: strings.NewReader(body)}
	if _, err := DecodeArray[item](cr, bound(3)); err != errTooMany {
		t.Fatalf("err %v, want the bound's error", err)
	}
	if cr.n > 256<<10 {
		t.Errorf("read %d of %d bytes before stopping, want only the first elements'", cr.n, len(body))
	}
	got, err := DecodeArray[item](strings.NewReader(` [{"a":1}, {"a":2}] `), bound(2))
	if err != nil || len(got) != 2 || *got[1].A != 2 {
		t.Errorf("within the bound: %v %v", got, err)
	}
}

func TestDecodeArrayErrorsNameTheElement(t *testing.T) {
	for body, want := range map[string]string{
		`[{"a":1},{"b":2}]`:   "unknown_field [1].b",
		`[{"a":1},{"a":"x"}]`: "invalid_type [1].a",
		`{"a":1}`:             "invalid_body ",
		``:                    "invalid_body ",
		`[{"a":1}] x`:         "invalid_json ",
		`[{"a":1}`:            "invalid_json ",
	} {
		_, err := DecodeArray[item](strings.NewReader(body), bound(5))
		e := kwhouse.AsError(err)
		if e == nil || e.Code+" "+e.Param != want {
			t.Errorf("%q: %v, want %s", body, err, want)
		}
	}
}

// A reader's failure (here a byte limit) comes back as itself, not as malformed JSON.
func TestDecodeArrayReturnsReadErrors(t *testing.T) {
	r := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(`[{"a":1},{"a":2},{"a":3}]`)), 10)
	_, err := DecodeArray[item](r, bound(5))
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		t.Errorf("err %v, want the MaxBytesError", err)
	}
}

type holder struct {
	Name string `json:"name"`
	Data []item `json:"data"`
}

func TestDecodeWithArray(t *testing.T) {
	var h holder
	err := DecodeWithArray(strings.NewReader(`{"data":[{"a":1},{"a":2}],"name":"x"}`), &h, "data", &h.Data, bound(2))
	if err != nil || h.Name != "x" || len(h.Data) != 2 {
		t.Fatalf("%+v %v", h, err)
	}
	h = holder{}
	big := `{"name":"x","data":[` + strings.Repeat(`{"a":1},`, 100_000) + `{"a":1}]}`
	cr := &countingReader{r: strings.NewReader(big)}
	if err := DecodeWithArray(cr, &h, "data", &h.Data, bound(3)); err != errTooMany || cr.n > 256<<10 {
		t.Errorf("over the bound: %v after %d bytes", err, cr.n)
	}
	for body, want := range map[string]string{
		`{"name":"x","other":1,"data":[]}`: "unknown_field other",
		`{"data":[{"a":"x"}]}`:             "invalid_type data[0].a",
		`{"data":[],"data":[]}`:            "invalid_json data",
		`[]`:                               "invalid_body ",
	} {
		h = holder{}
		e := kwhouse.AsError(DecodeWithArray(strings.NewReader(body), &h, "data", &h.Data, bound(3)))
		if e == nil || e.Code+" "+e.Param != want {
			t.Errorf("%q: %v, want %s", body, e, want)
		}
	}
}
