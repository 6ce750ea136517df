package deployplan

import (
	"strings"
	"testing"
)

func TestParseCatalogMistakes(t *testing.T) {
	for _, tt := range []struct{ json, want string }{
		{`{"services": []}`, "commit: required"},
		{`{"commit": "c", "services": [{"image": "x"}, {"id": "a", "image": ""}, {"id": "a", "image": "UPPER CASE"}]}`, "services[0].id: required"},
		{`not json`, "catalog"},
	} {
		_, err := ParseCatalog([]byte(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseCatalog(%s) = %v, want it to mention %q", tt.json, err, tt.want)
		}
	}
}
