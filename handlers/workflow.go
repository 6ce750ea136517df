package handlers

import (
	"context"
	"errors"
	"net/http"

	"github.com/hanzoai/deploy-web/gitops"
)

// person is the request's person as the workflows name them.
func (s *Server) person(ctx context.Context) gitops.Person {
	return gitops.Person{Actor: auditActor(ctx)}
}

// kindStatus is the status of each kind of workflow error.
func kindStatus(k gitops.Kind) int {
	switch k {
	case gitops.KindInternal:
		return http.StatusInternalServerError
	case gitops.KindInvalid:
		return http.StatusBadRequest
	case gitops.KindForbidden:
		return http.StatusForbidden
	case gitops.KindNotFound:
		return http.StatusNotFound
	case gitops.KindConflict:
		return http.StatusConflict
	case gitops.KindUnprocessable:
		return http.StatusUnprocessableEntity
	case gitops.KindUpstream:
		return http.StatusBadGateway
	case gitops.KindUnavailable:
		return http.StatusServiceUnavailable
	case gitops.KindTooMany:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// workflowError is the one mapping of a workflow's error (package gitops)
// to an answer: a *gitops.Error keeps its public text and gets its kind's
// status; a release or freeze refusal is answered as releaseError does;
// anything else is left to the adapter (a 500, logged).
func workflowError(err error) error {
	var e *gitops.Error
	if !errors.As(err, &e) {
		return releaseError(err)
	}
	return &httpError{Status: kindStatus(e.Kind), Reason: e.Reason, Public: e.Public, Err: e.Err}
}
