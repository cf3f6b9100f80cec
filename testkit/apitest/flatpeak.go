package apitest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// flatPeakJSON is FlatPeak's own OpenAPI document (release 2024-08-24), unchanged; see
// flatpeak/NOTICE. kwhouse promises that a client generated from it works unchanged.
//
//go:embed flatpeak/flatpeak-openapi-2024-08-24.json
var flatPeakJSON []byte

var (
	flatPeakOnce   sync.Once
	flatPeakDoc    *openapi3.T
	flatPeakRouter routers.Router
	flatPeakErr    error
)

// loadFlatPeak parses FlatPeak's document once, with its documented contradictions
// resolved (docs/api.md, "FlatPeak wire compatibility"), and builds its router.
func loadFlatPeak() (*openapi3.T, routers.Router, error) {
	flatPeakOnce.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(flatPeakJSON)
		if err != nil {
			flatPeakErr = fmt.Errorf("load flatpeak document: %w", err)
			return
		}
		doc.Servers = nil // match any host
		resolveFlatPeakContradictions(doc)
		flatPeakDoc = doc
		flatPeakRouter, flatPeakErr = gorillamux.NewRouter(doc)
	})
	return flatPeakDoc, flatPeakRouter, flatPeakErr
}

// FlatPeakRouter returns a router over FlatPeak's document (see loadFlatPeak).
func FlatPeakRouter() (routers.Router, error) {
	_, r, err := loadFlatPeak()
	return r, err
}

// checkFlatPeak says how a response breaks FlatPeak's document, or "" when it does not.
func checkFlatPeak(hr *http.Request, r Response) string {
	router, err := FlatPeakRouter()
	if err != nil {
		return err.Error()
	}
	route, params, err := router.FindRoute(hr)
	if err != nil {
		return "" // not a FlatPeak operation: kwhouse's own document covers it
	}
	status := r.Status
	if route.Operation.Responses.Value(strconv.Itoa(status)) == nil {
		if status < 400 {
			return fmt.Sprintf("status %d is not listed by FlatPeak", status)
		}
		// An error status FlatPeak does not list (400, 409, 413, 429, 503): a generated
		// client handles it as its generic error, whose shape is FlatPeak's error object.
		return checkFlatPeakError(r.Body)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: status, Header: r.Header, Body: io.NopCloser(bytes.NewReader(r.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err.Error()
	}
	return ""
}

// checkFlatPeakError checks an error body against FlatPeak's error object: `message` a string.
func checkFlatPeakError(body []byte) string {
	var e struct {
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Message == nil {
		return "error body has no string message"
	}
	return ""
}

// resolveFlatPeakContradictions patches the few places where FlatPeak's document
// contradicts itself; docs/api.md lists each with its reason.
func resolveFlatPeakContradictions(doc *openapi3.T) {
	// Event.data always points at Device, though an event carries the object it is
	// about (customer, location, device or tariff element): any object is accepted.
	if ev := doc.Components.Schemas["Event"]; ev != nil && ev.Value != nil {
		ev.Value.Properties["data"] = openapi3.NewObjectSchema().NewRef()
	}
}

// FlatPeakOperations lists FlatPeak's documented operations as "METHOD /path/{param}".
func FlatPeakOperations() ([]string, error) {
	doc, _, err := loadFlatPeak()
	if err != nil {
		return nil, err
	}
	var out []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	return out, nil
}

// CheckFlatPeakRequest reports how a request breaks FlatPeak's document (parameters and
// body), or nil: a test proves with it that it sends what a FlatPeak client may send.
func CheckFlatPeakRequest(method, path string, body []byte) error {
	router, err := FlatPeakRouter()
	if err != nil {
		return err
	}
	hr, err := http.NewRequest(method, "http://kwhouse.test"+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	route, params, err := router.FindRoute(hr)
	if err != nil {
		return fmt.Errorf("not a FlatPeak operation: %w", err)
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: hr, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}})
}
