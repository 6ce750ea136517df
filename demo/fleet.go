package demo

import (
	"github.com/hanzoai/deploy-web/devcluster"
)

// Namespaces returns the demo's platform namespaces: the seeded fleet's,
// StagingNamespace, where the dev environment deploys, PreprodNamespace,
// where the staging environment deploys (each empty until its auto-sync
// or an apply), and ProductionNamespace, prod's (its first commit applied
// as the demo starts; prod refuses applies afterwards), read so the
// matrix shows prod and a promotion can target it.
func Namespaces() []string {
	return []string{"storefront", "payments", StagingNamespace, PreprodNamespace, ProductionNamespace}
}

// release is one step of an App's history: a spec patch applied after the
// previous step's rollout completed.
type release struct {
	spec map[string]any
	// settle false: do not wait for this step's rollout (it never ends, or
	// ends slowly, on purpose).
	settle bool
}

// seedApp is one App of the demo fleet with the story of its releases.
type seedApp struct {
	name, namespace, repo string
	// base is the spec every release starts from.
	base     map[string]any
	releases []release
	// expect is the state the demo shows once seeded (documented in the
	// README's seeded fleet and checked by the integration test).
	expectHealth, expectSync string
	logs                     string // log personality
}

func tag(repo, t string) map[string]any { return map[string]any{"image": repo + ":" + t} }

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func ok(m map[string]any) release { return release{spec: m, settle: true} }

// fleet returns the demo fleet: a believable spread of states.
func fleet() []seedApp {
	const reg = "registry.demo.local/"
	apps := []seedApp{
		{name: "web", namespace: "storefront", repo: reg + "storefront/web", logs: "http",
			base: map[string]any{"replicas": int64(3), "port": int64(8080), "host": "www.shop.demo.local", "minAvailable": int64(2)},
			releases: []release{
				ok(tag(reg+"storefront/web", "1.0.0")), ok(tag(reg+"storefront/web", "1.1.0")), ok(tag(reg+"storefront/web", "1.2.0")),
			},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "checkout", namespace: "storefront", repo: reg + "storefront/checkout", logs: "crash",
			base: map[string]any{"replicas": int64(3), "progressDeadlineSeconds": int64(25)},
			releases: []release{
				ok(tag(reg+"storefront/checkout", "1.0.0")), ok(tag(reg+"storefront/checkout", "1.1.0")), ok(tag(reg+"storefront/checkout", "1.2.0")),
				// 1.3.0 crashes on start: the rollout stalls, 1.2.0 keeps serving.
				{spec: with(tag(reg+"storefront/checkout", "1.3.0"), "podLabels", map[string]any{devcluster.BehaviorLabel: devcluster.BehaviorCrashLoop})},
			},
			expectHealth: "Degraded", expectSync: "OutOfSync"},
		{name: "catalog", namespace: "storefront", repo: reg + "storefront/catalog", logs: "http",
			base: map[string]any{"replicas": int64(3)},
			releases: []release{
				ok(tag(reg+"storefront/catalog", "2.0.0")), ok(tag(reg+"storefront/catalog", "2.1.0")),
				// 2.2.0 warms a large cache: each pod takes minutes to be ready.
				{spec: with(tag(reg+"storefront/catalog", "2.2.0"),
					"podLabels", map[string]any{devcluster.BehaviorLabel: devcluster.BehaviorSlow},
					"podAnnotations", map[string]any{devcluster.ReadyDelayAnnotation: "240s"})},
			},
			expectHealth: "Progressing", expectSync: "OutOfSync"},
		{name: "search", namespace: "storefront", repo: reg + "storefront/search", logs: "http",
			base: map[string]any{"replicas": int64(2)},
			releases: []release{
				ok(tag(reg+"storefront/search", "1.4.0")), ok(tag(reg+"storefront/search", "1.5.0")),
				ok(with(tag(reg+"storefront/search", "1.5.0"), "paused", true)),
				// Declared 1.6.0 while rollouts are paused: still running 1.5.0.
				{spec: with(tag(reg+"storefront/search", "1.6.0"), "paused", true)},
			},
			expectHealth: "Suspended", expectSync: "OutOfSync"},
		{name: "cart", namespace: "storefront", repo: reg + "storefront/cart", logs: "http",
			base: map[string]any{"replicas": int64(2)},
			releases: []release{
				ok(tag(reg+"storefront/cart", "3.1.0")), ok(tag(reg+"storefront/cart", "latest")),
				ok(tag(reg+"storefront/cart", "sha-3f9c2e1")), ok(tag(reg+"storefront/cart", "3.2.0")),
			},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "recommendations", namespace: "storefront", repo: reg + "storefront/recommendations", logs: "worker",
			base: map[string]any{"replicas": int64(2), "env": []any{
				map[string]any{"name": "MODEL", "value": "two-tower-v7"}, map[string]any{"name": "LOG_LEVEL", "value": "info"},
			}},
			releases:     []release{ok(tag(reg+"storefront/recommendations", "0.9.0")), ok(tag(reg+"storefront/recommendations", "1.0.0"))},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "images", namespace: "storefront", repo: reg + "storefront/images", logs: "http",
			base: map[string]any{"replicas": int64(2), "progressDeadlineSeconds": int64(600)},
			releases: []release{
				ok(tag(reg+"storefront/images", "1.0.0")),
				// A tag that was never pushed: the new pod waits in ImagePullBackOff.
				{spec: with(tag(reg+"storefront/images", "1.0.1"), "podLabels", map[string]any{devcluster.BehaviorLabel: devcluster.BehaviorImagePull})},
			},
			expectHealth: "Progressing", expectSync: "OutOfSync"},
		{name: "ledger", namespace: "payments", repo: reg + "payments/ledger", logs: "worker",
			base:         map[string]any{"replicas": int64(2), "minAvailable": int64(1)},
			releases:     []release{ok(tag(reg+"payments/ledger", "2.3.0")), ok(tag(reg+"payments/ledger", "2.4.0")), ok(tag(reg+"payments/ledger", "2.4.1"))},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "gateway", namespace: "payments", repo: reg + "payments/gateway", logs: "http",
			base:         map[string]any{"replicas": int64(3), "host": "api.pay.demo.local"},
			releases:     []release{ok(tag(reg+"payments/gateway", "1.8.0")), ok(tag(reg+"payments/gateway", "1.9.0")), ok(tag(reg+"payments/gateway", "2.0.0"))},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "notifications", namespace: "payments", repo: reg + "payments/notifications", logs: "worker",
			base:         map[string]any{"replicas": int64(1)},
			releases:     []release{ok(tag(reg+"payments/notifications", "1.0.0")), ok(tag(reg+"payments/notifications", "1.0.1")), ok(tag(reg+"payments/notifications", "1.1.0"))},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "billing", namespace: "payments", repo: reg + "payments/billing", logs: "http",
			base: map[string]any{"replicas": int64(2)},
			releases: []release{
				ok(tag(reg+"payments/billing", "4.0.0")), ok(tag(reg+"payments/billing", "4.1.0")),
				ok(tag(reg+"payments/billing", "4.2.0")), ok(tag(reg+"payments/billing", "4.2.1")),
			},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "payouts", namespace: "payments", repo: reg + "payments/payouts", logs: "worker",
			base:         map[string]any{"replicas": int64(2)},
			releases:     []release{ok(tag(reg+"payments/payouts", "v1.0.0")), ok(tag(reg+"payments/payouts", "v1.1.0"))},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "reports", namespace: "payments", repo: reg + "payments/reports", logs: "worker",
			base:         map[string]any{"replicas": int64(0)},
			releases:     []release{ok(tag(reg+"payments/reports", "0.3.0"))},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "fx-rates", namespace: "payments", repo: reg + "payments/fx-rates", logs: "worker",
			base:         map[string]any{"replicas": int64(1)},
			releases:     []release{ok(tag(reg+"payments/fx-rates", "0.8.0")), ok(tag(reg+"payments/fx-rates", "0.8.1"))},
			expectHealth: "Healthy", expectSync: "Synced"},
	}
	return apps
}
