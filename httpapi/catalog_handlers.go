package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/catalog"
)

// deleted is the body of a successful DELETE (202 in the reference API).
type deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
	Message string `json:"message"`
}

func accepted(id, object string) (int, any, error) {
	return http.StatusAccepted, deleted{ID: id, Object: object, Deleted: true, Message: "Accepted"}, nil
}

// pathID returns the :id path parameter when it has the prefix; any other id is 404.
func pathID(c *gin.Context, prefix string) (string, error) {
	id := c.Param("id")
	if !kwhouse.ValidID(prefix, id) {
		return "", kwhouse.NotFound("id", id)
	}
	return id, nil
}

func (s *Server) createCustomer(c *gin.Context) (int, any, error) {
	var in catalog.CustomerInput
	if err := decodeOptionalBody(c, &in); err != nil {
		return 0, nil, err
	}
	cu, err := s.deps.Catalog.CreateCustomer(c.Request.Context(), scopeOf(c), in)
	return http.StatusCreated, cu, err
}

func (s *Server) getCustomer(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixCustomer)
	if err != nil {
		return 0, nil, err
	}
	cu, err := s.deps.Catalog.GetCustomer(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, cu, err
}

func (s *Server) updateCustomer(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixCustomer)
	if err != nil {
		return 0, nil, err
	}
	var in catalog.CustomerInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	cu, err := s.deps.Catalog.UpdateCustomer(c.Request.Context(), scopeOf(c), id, in)
	return http.StatusAccepted, cu, err
}

func (s *Server) deleteCustomer(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixCustomer)
	if err != nil {
		return 0, nil, err
	}
	if err := s.deps.Catalog.DeleteCustomer(c.Request.Context(), scopeOf(c), id); err != nil {
		return 0, nil, err
	}
	return accepted(id, "customer")
}

func (s *Server) listCustomers(c *gin.Context) (int, any, error) {
	q, err := listQuery(c, kwhouse.PrefixCustomer, catalog.FilterReferenceID)
	if err != nil {
		return 0, nil, err
	}
	data, more, err := s.deps.Catalog.ListCustomers(c.Request.Context(), scopeOf(c), q)
	return http.StatusOK, newList(c, data, more), err
}

func (s *Server) createLocation(c *gin.Context) (int, any, error) {
	var in catalog.LocationInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	l, err := s.deps.Catalog.CreateLocation(c.Request.Context(), scopeOf(c), in)
	return http.StatusCreated, l, err
}

func (s *Server) getLocation(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixLocation)
	if err != nil {
		return 0, nil, err
	}
	l, err := s.deps.Catalog.GetLocation(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, l, err
}

func (s *Server) updateLocation(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixLocation)
	if err != nil {
		return 0, nil, err
	}
	var in catalog.LocationInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	l, err := s.deps.Catalog.UpdateLocation(c.Request.Context(), scopeOf(c), id, in)
	return http.StatusOK, l, err
}

func (s *Server) deleteLocation(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixLocation)
	if err != nil {
		return 0, nil, err
	}
	if err := s.deps.Catalog.DeleteLocation(c.Request.Context(), scopeOf(c), id, s.deps.LocationDeleteHooks...); err != nil {
		return 0, nil, err
	}
	return accepted(id, "location")
}

func (s *Server) listLocations(c *gin.Context) (int, any, error) {
	q, err := listQuery(c, kwhouse.PrefixLocation, catalog.FilterReferenceID, catalog.FilterCustomerID)
	if err != nil {
		return 0, nil, err
	}
	data, more, err := s.deps.Catalog.ListLocations(c.Request.Context(), scopeOf(c), q)
	return http.StatusOK, newList(c, data, more), err
}

func (s *Server) createDevice(c *gin.Context) (int, any, error) {
	var in catalog.DeviceInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	d, err := s.deps.Catalog.CreateDevice(c.Request.Context(), scopeOf(c), in)
	return http.StatusCreated, d, err
}

func (s *Server) getDevice(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixDevice)
	if err != nil {
		return 0, nil, err
	}
	d, err := s.deps.Catalog.GetDevice(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, d, err
}

func (s *Server) updateDevice(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixDevice)
	if err != nil {
		return 0, nil, err
	}
	var in catalog.DeviceInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	d, err := s.deps.Catalog.UpdateDevice(c.Request.Context(), scopeOf(c), id, in)
	return http.StatusOK, d, err
}

func (s *Server) deleteDevice(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixDevice)
	if err != nil {
		return 0, nil, err
	}
	if err := s.deps.Catalog.DeleteDevice(c.Request.Context(), scopeOf(c), id); err != nil {
		return 0, nil, err
	}
	return accepted(id, "device")
}

func (s *Server) listDevices(c *gin.Context) (int, any, error) {
	q, err := listQuery(c, kwhouse.PrefixDevice, catalog.FilterReferenceID)
	if err != nil {
		return 0, nil, err
	}
	data, more, err := s.deps.Catalog.ListDevices(c.Request.Context(), scopeOf(c), q)
	return http.StatusOK, newList(c, data, more), err
}

func (s *Server) getEvent(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixEvent)
	if err != nil {
		return 0, nil, err
	}
	e, err := s.deps.Catalog.GetEvent(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, e, err
}

func (s *Server) listEvents(c *gin.Context) (int, any, error) {
	q, err := listQuery(c, kwhouse.PrefixEvent, catalog.FilterEventType, catalog.FilterObjectID)
	if err != nil {
		return 0, nil, err
	}
	data, more, err := s.deps.Catalog.ListEvents(c.Request.Context(), scopeOf(c), q)
	return http.StatusOK, newList(c, data, more), err
}
