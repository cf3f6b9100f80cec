package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kwhouse/kwhouse"
	"github.com/kwhouse/kwhouse/webhooks"
)

func (s *Server) createWebhook(c *gin.Context) (int, any, error) {
	var in webhooks.EndpointInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	e, err := s.deps.Webhooks.Create(c.Request.Context(), scopeOf(c), in)
	return http.StatusCreated, e, err
}

func (s *Server) getWebhook(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixWebhook)
	if err != nil {
		return 0, nil, err
	}
	e, err := s.deps.Webhooks.Get(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, e, err
}

func (s *Server) listWebhooks(c *gin.Context) (int, any, error) {
	q, err := listQuery(c, kwhouse.PrefixWebhook)
	if err != nil {
		return 0, nil, err
	}
	data, more, err := s.deps.Webhooks.List(c.Request.Context(), scopeOf(c), q)
	return http.StatusOK, newList(c, data, more), err
}

func (s *Server) updateWebhook(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixWebhook)
	if err != nil {
		return 0, nil, err
	}
	var in webhooks.EndpointInput
	if err := decodeBody(c, &in); err != nil {
		return 0, nil, err
	}
	e, err := s.deps.Webhooks.Update(c.Request.Context(), scopeOf(c), id, in)
	return http.StatusOK, e, err
}

func (s *Server) deleteWebhook(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixWebhook)
	if err != nil {
		return 0, nil, err
	}
	if err := s.deps.Webhooks.Delete(c.Request.Context(), scopeOf(c), id); err != nil {
		return 0, nil, err
	}
	return accepted(id, "webhook_endpoint")
}

func (s *Server) rotateWebhookSecret(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixWebhook)
	if err != nil {
		return 0, nil, err
	}
	e, err := s.deps.Webhooks.RotateSecret(c.Request.Context(), scopeOf(c), id)
	return http.StatusOK, e, err
}

func (s *Server) testWebhook(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixWebhook)
	if err != nil {
		return 0, nil, err
	}
	d, err := s.deps.Webhooks.Test(c.Request.Context(), scopeOf(c), id)
	return http.StatusAccepted, d, err
}

func (s *Server) resendWebhook(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixWebhook)
	if err != nil {
		return 0, nil, err
	}
	d, err := s.deps.Webhooks.Resend(c.Request.Context(), scopeOf(c), id, c.Param("delivery_id"))
	return http.StatusAccepted, d, err
}

func (s *Server) listWebhookAttempts(c *gin.Context) (int, any, error) {
	id, err := pathID(c, kwhouse.PrefixWebhook)
	if err != nil {
		return 0, nil, err
	}
	q, err := listQuery(c, kwhouse.PrefixAttempt)
	if err != nil {
		return 0, nil, err
	}
	data, more, err := s.deps.Webhooks.Attempts(c.Request.Context(), scopeOf(c), id,
		webhooks.AttemptQuery{Limit: q.Limit, StartingAfter: q.StartingAfter, EndingBefore: q.EndingBefore})
	return http.StatusOK, newList(c, data, more), err
}
