package notify

import (
	"errors"
	"github.com/hanzoai/deploy-web/envconfig"
	"strings"
	"testing"
	"time"
)

func validSubscription() Subscription {
	return Subscription{
		ID:        "checkout-prod",
		Scope:     Scope{Cluster: "prod-1", Namespace: "shop", App: "checkout"},
		Triggers:  []Trigger{{Type: TriggerDegraded, For: 60}, {Type: TriggerRecovered}},
		Provider:  envconfig.ProviderWebhook,
		URL:       "https://hooks.example/deploy",
		SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "checkout"},
		Author:    "ada@example.com",
		Created:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

func TestSubscriptionValidate(t *testing.T) {
	hosts := []string{"hooks.example", "127.0.0.1:8080"}
	tests := []struct {
		name   string
		change func(*Subscription)
		want   []string // fields at fault
	}{
		{"valid", func(*Subscription) {}, nil},
		{"loopback http", func(s *Subscription) { s.URL = "http://127.0.0.1:8080/x" }, nil},
		{"slack without secret", func(s *Subscription) { s.Provider, s.SecretRef = envconfig.ProviderSlack, nil }, nil},
		{"bad id", func(s *Subscription) { s.ID = "Checkout_1" }, []string{"id"}},
		{"empty id", func(s *Subscription) { s.ID = "" }, []string{"id"}},
		{"bad scope", func(s *Subscription) { s.Scope.App, s.Scope.Namespace = "<script>", "Shop" }, []string{"scope.namespace", "scope.app"}},
		{"no triggers", func(s *Subscription) { s.Triggers = nil }, []string{"triggers"}},
		{"unknown trigger", func(s *Subscription) { s.Triggers[1].Type = "exploded" }, []string{"triggers[1].type"}},
		{"twice", func(s *Subscription) { s.Triggers[1].Type = TriggerDegraded }, []string{"triggers[1].type"}},
		{"for on recovered", func(s *Subscription) { s.Triggers[1].For = 5 }, []string{"triggers[1].for"}},
		{"for negative", func(s *Subscription) { s.Triggers[0].For = -1 }, []string{"triggers[0].for"}},
		{"for too long", func(s *Subscription) { s.Triggers[0].For = MaxDegradedFor + 1 }, []string{"triggers[0].for"}},
		{"bad provider", func(s *Subscription) { s.Provider = "pagerduty" }, []string{"provider"}},
		{"unlisted host", func(s *Subscription) { s.URL = "https://evil.example/x" }, []string{"url"}},
		{"look-alike host", func(s *Subscription) { s.URL = "https://hooks.ex\u0430mple/x" }, []string{"url"}},
		{"http off loopback", func(s *Subscription) { s.URL = "http://hooks.example/x" }, []string{"url"}},
		{"userinfo", func(s *Subscription) { s.URL = "https://user:pw@hooks.example/x" }, []string{"url"}},
		{"fragment", func(s *Subscription) { s.URL = "https://hooks.example/x#y" }, []string{"url"}},
		{"too long", func(s *Subscription) { s.URL = "https://hooks.example/" + strings.Repeat("a", envconfig.MaxURLLength) }, []string{"url"}},
		{"webhook without key", func(s *Subscription) { s.SecretRef = nil }, []string{"secretRef"}},
		{"bad secret ref", func(s *Subscription) { s.SecretRef = &envconfig.SecretRef{Name: "Keys!", Key: "a/b"} }, []string{"secretRef.name", "secretRef.key"}},
		{"no author", func(s *Subscription) { s.Author = "" }, []string{"author"}},
		{"no created", func(s *Subscription) { s.Created = time.Time{} }, []string{"created"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSubscription()
			s.Triggers = append([]Trigger(nil), s.Triggers...)
			tt.change(&s)
			err := s.Validate(hosts)
			var got []string
			for _, e := range unjoin(err) {
				var fe *FieldError
				if !errors.As(e, &fe) {
					t.Fatalf("Validate error %v is not a *FieldError", e)
				}
				if !strings.HasPrefix(e.Error(), "notify: subscription: "+fe.Field+": ") {
					t.Errorf("error %q does not name its field %s", e, fe.Field)
				}
				got = append(got, fe.Field)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("Validate() fields = %v, want %v (error: %v)", got, tt.want, err)
			}
		})
	}
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestScopeMatches(t *testing.T) {
	ev := Event{App: "checkout", Cluster: "prod-1", Namespace: "shop", Environment: "production"}
	tests := []struct {
		scope Scope
		want  bool
	}{
		{Scope{}, true},
		{Scope{App: "checkout"}, true},
		{Scope{Environment: "production"}, true},
		{Scope{Cluster: "prod-1", Namespace: "shop", App: "checkout", Environment: "production"}, true},
		{Scope{App: "cart"}, false},
		{Scope{App: "checkout", Cluster: "prod-2"}, false},
		{Scope{Environment: "staging"}, false},
	}
	for _, tt := range tests {
		if got := tt.scope.Matches(ev); got != tt.want {
			t.Errorf("%+v.Matches(%+v) = %v, want %v", tt.scope, ev, got, tt.want)
		}
	}
}

// TestDescribe: triggers in words.
func TestDescribe(t *testing.T) {
	tests := []struct {
		in   []Trigger
		want string
	}{
		{nil, ""},
		{[]Trigger{{Type: TriggerDrift}}, "drift"},
		{[]Trigger{{Type: TriggerDegraded, For: 30}, {Type: TriggerRecovered}}, "degraded for 30s, recovered"},
	}
	for _, tt := range tests {
		if got := Describe(tt.in); got != tt.want {
			t.Errorf("Describe(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
