package handlers

import (
	"context"
	"errors"
	"net/http"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/gitops"
)

// person is the request's person as the workflows name them.
func (s *Server) person(ctx context.Context) gitops.Person {
	id, _ := auth.FromContext(ctx)
	return gitops.Person{Actor: auditActor(ctx), Name: id.Name}
}

// kindStatus is the status of each kind of workflow error.
var kindStatus = map[gitops.Kind]int{
	gitops.KindInternal:      http.StatusInternalServerError,
	gitops.KindInvalid:       http.StatusBadRequest,
	gitops.KindForbidden:     http.StatusForbidden,
	gitops.KindNotFound:      http.StatusNotFound,
	gitops.KindConflict:      http.StatusConflict,
	gitops.KindUnprocessable: http.StatusUnprocessableEntity,
	gitops.KindUpstream:      http.StatusBadGateway,
	gitops.KindUnavailable:   http.StatusServiceUnavailable,
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
	status, ok := kindStatus[e.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	return &httpError{Status: status, Reason: e.Reason, Public: e.Public, Err: e.Err}
}
