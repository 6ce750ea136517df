package paths

import "net/url"

// EnvMatrix is /environments with the matrix's filters in q.
func EnvMatrix(q url.Values) string { return WithQuery(Environments(), q) }

// APIEnvironments is the JSON of the environments: their GitOps state
// without a view, the matrix with view=matrix (and
// the matrix's filters) in q.
func APIEnvironments(q url.Values) string { return WithQuery("/v1/deploy/environments", q) }

// EnvCompare compares App app in environment from (left) with the same App
// in env (right).
func EnvCompare(env, app, from string) string {
	return WithQuery(Env(env)+join("/compare/", app), url.Values{"from": {from}})
}

// EnvPromote is the promotion dialog of env: the gates of promoting app
// (every App of from when app is "") from environment from, and the form
// that requests or performs it.
func EnvPromote(env, from, app string) string {
	q := url.Values{"from": {from}}
	if app != "" {
		q.Set("app", app)
	}
	return WithQuery(Env(env)+"/promote", q)
}

// EnvPromoteChecks is the soak and checks state of promoting app from
// environment from into env (the matrix cell's fragment).
func EnvPromoteChecks(env, from, app string) string {
	return WithQuery(Env(env)+"/promote/checks", url.Values{"from": {from}, "app": {app}})
}

// EnvPromoteRequest is the promotion dialog's form (POST).
func EnvPromoteRequest(env string) string { return Env(env) + "/promote" }

// EnvPromoteApprove approves promotion request id of env (POST).
func EnvPromoteApprove(env, id string) string { return Env(env) + join("/promotions/", id, "/approve") }

// EnvPromoteReject rejects promotion request id of env (POST).
func EnvPromoteReject(env, id string) string { return Env(env) + join("/promotions/", id, "/reject") }

// APIEnvPromotions requests or performs a promotion into env (POST).
func APIEnvPromotions(env string) string {
	return join("/v1/deploy/environments/", env) + "/promotions"
}

// APIEnvPromotionApprove approves promotion request id of env (POST).
func APIEnvPromotionApprove(env, id string) string {
	return APIEnvPromotions(env) + join("/", id, "/approve")
}

// APIEnvPromotionReject rejects promotion request id of env (POST).
func APIEnvPromotionReject(env, id string) string {
	return APIEnvPromotions(env) + join("/", id, "/reject")
}
