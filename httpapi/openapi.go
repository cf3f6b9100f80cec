package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gin-gonic/gin"
)

// openAPIYAML is kwhouse's own OpenAPI 3 document, covering every route it serves.
//
//go:embed openapi.yaml
var openAPIYAML []byte

var (
	docOnce sync.Once
	docJSON []byte
	docErr  error
)

// OpenAPI returns the parsed and validated document.
func OpenAPI() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load openapi document: %w", err)
	}
	return doc, nil
}

func (s *Server) openAPI(c *gin.Context) {
	docOnce.Do(func() {
		doc, err := OpenAPI()
		if err != nil {
			docErr = err
			return
		}
		docJSON, docErr = json.Marshal(doc)
	})
	if docErr != nil {
		s.writeError(c, docErr)
		return
	}
	c.Data(http.StatusOK, "application/json", docJSON)
}
