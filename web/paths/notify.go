package paths

import "net/url"

// AppNotifications receives the form that adds a subscription of an App.
func AppNotifications(cluster, ns, name string) string {
	return App(cluster, ns, name) + "/notifications"
}

// AppNotificationTest sends a test message to an App's subscription id.
func AppNotificationTest(cluster, ns, name, id string) string {
	return AppNotifications(cluster, ns, name) + join("/", id, "/test")
}

// AppNotificationDelete deletes an App's subscription id.
func AppNotificationDelete(cluster, ns, name, id string) string {
	return AppNotifications(cluster, ns, name) + join("/", id, "/delete")
}

// EnvNotifications receives the form that adds a subscription of an
// environment.
func EnvNotifications(env string) string { return Env(env) + "/notifications" }

// EnvNotificationTest sends a test message to an environment's
// subscription id.
func EnvNotificationTest(env, id string) string {
	return EnvNotifications(env) + join("/", id, "/test")
}

// EnvNotificationDelete deletes an environment's subscription id.
func EnvNotificationDelete(env, id string) string {
	return EnvNotifications(env) + join("/", id, "/delete")
}

// APISubscriptions lists (GET, filtered by q: cluster, namespace, app,
// environment) and creates (POST) notification subscriptions.
func APISubscriptions(q url.Values) string {
	return WithQuery("/v1/deploy/notifications/subscriptions", q)
}

// APISubscription is one subscription (GET, PUT, DELETE).
func APISubscription(id string) string { return join("/v1/deploy/notifications/subscriptions/", id) }

// APISubscriptionTest sends a subscription's test message (POST).
func APISubscriptionTest(id string) string { return APISubscription(id) + "/test" }

// APISubscriptionLog is a subscription's delivery log (GET).
func APISubscriptionLog(id string) string { return APISubscription(id) + "/log" }
