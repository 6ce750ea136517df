package envconfig

import (
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/internal/scope"
)

// declaredKey is a valid declaration: an HMAC key for a webhook to
// http://127.0.0.1:8080/hook, about Apps of namespace shop in dev.
var declaredKey = NotificationKey{SecretRef: SecretRef{Name: "deploy-web-notify", Key: "inbox"}, Provider: ProviderWebhook,
	URLPrefix: "http://127.0.0.1:8080/hook", Scope: scope.Scope{Environments: []string{"dev"}, Namespaces: []string{"shop"}}}

// TestValidateNotificationKey: each mistake of a declaration names its field.
func TestValidateNotificationKey(t *testing.T) {
	hosts := []string{"127.0.0.1:8080", "hooks.example"}
	if errs := ValidateNotificationKey(declaredKey, hosts); len(errs) != 0 {
		t.Fatalf("ValidateNotificationKey(declaredKey) = %v, want none", errs)
	}
	bad := NotificationKey{SecretRef: SecretRef{Name: "Bad!", Key: "a/b"}, Provider: "pager", URLPrefix: "https://unlisted.example/x",
		Scope: scope.Scope{Apps: []string{"we?b"}}}
	var fields []string
	for _, e := range ValidateNotificationKey(bad, hosts) {
		fields = append(fields, e.Field)
	}
	want := []string{"secretRef.name", "secretRef.key", "provider", "urlPrefix", "scope.apps[0]"}
	if strings.Join(fields, " ") != strings.Join(want, " ") {
		t.Errorf("ValidateNotificationKey fields = %q, want %q", fields, want)
	}
	dots := declaredKey
	dots.URLPrefix = "http://127.0.0.1:8080/hook/../x"
	if errs := ValidateNotificationKey(dots, hosts); len(errs) != 1 || errs[0].Field != "urlPrefix" {
		t.Errorf("ValidateNotificationKey(dot segments) = %v, want one urlPrefix error", errs)
	}
}
