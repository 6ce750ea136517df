package writeback

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
)

func TestToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WB_TEST_TOKEN", testToken)
	for _, c := range []envconfig.Credentials{{TokenEnv: "WB_TEST_TOKEN"}, {TokenFile: file}} {
		tok, err := ReadToken(c)
		if err != nil || tok.secret != testToken || tok.user != "x-access-token" {
			t.Fatalf("Token(%+v) = %v, want the token for x-access-token", c, err)
		}
		js, _ := json.Marshal(struct{ T Token }{tok})
		for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s %q", tok, tok, tok, tok, tok), string(js)} {
			if strings.Contains(s, testToken) {
				t.Errorf("a formatted Token shows the secret: %s", s)
			}
		}
	}
	multi := filepath.Join(dir, "multi")
	if err := os.WriteFile(multi, []byte(testToken+"\nsecond-line-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("a", maxTokenFileBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WB_EMPTY", "")
	for _, tc := range []struct {
		c    envconfig.Credentials
		want string
	}{
		{envconfig.Credentials{TokenEnv: "WB_EMPTY"}, "$WB_EMPTY is empty"},
		{envconfig.Credentials{TokenFile: filepath.Join(dir, "missing")}, "credentials.tokenFile"},
		{envconfig.Credentials{TokenFile: multi}, "must be one line"},
		{envconfig.Credentials{TokenFile: big}, "more than"},
	} {
		_, err := ReadToken(tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "second-line-secret") {
			t.Errorf("Token(%+v) = %v, want an error saying %q without the file's content", tc.c, err, tc.want)
		}
	}
	if tok, err := ReadToken(envconfig.Credentials{}); err != nil || !tok.Empty() {
		t.Errorf("Token(no credentials) = %v, %v; want an empty token", tok, err)
	}
}
