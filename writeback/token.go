package writeback

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/hanzoai/deploy-web/envconfig"
)

// maxTokenFileBytes caps a token file.
const maxTokenFileBytes = 16 << 10

// Token is a push token. It prints as "[redacted]" in every format, so a
// Token that reaches a log or an error by mistake shows nothing.
type Token struct {
	user, secret string
}

// NewToken makes a Token for HTTP basic auth (user "" means
// "x-access-token").
func NewToken(user, secret string) Token {
	if user == "" {
		user = "x-access-token"
	}
	return Token{user: user, secret: secret}
}

// Empty reports whether the token holds no secret (anonymous access).
func (t Token) Empty() bool { return t.secret == "" }

func (t Token) String() string { return "[redacted]" }

// GoString keeps %#v from printing the fields.
func (t Token) GoString() string { return "writeback.Token{[redacted]}" }

// MarshalJSON keeps the secret out of JSON.
func (t Token) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// redact replaces the secret in s.
func (t Token) redact(s string) string {
	if len(t.secret) < 4 {
		// A secret this short would redact ordinary words; it is never
		// a real token, and the error text never holds it anyway.
		return s
	}
	// The secret as written, and as an Authorization header carries it.
	s = strings.ReplaceAll(s, t.secret, "[redacted]")
	return strings.ReplaceAll(s, base64.StdEncoding.EncodeToString([]byte(t.user+":"+t.secret)), "[redacted]")
}

// ReadToken reads the token the credentials c name; no credentials mean an
// empty Token (anonymous). Errors name the variable or the file, never a
// value.
func ReadToken(c envconfig.Credentials) (Token, error) {
	switch {
	case c.TokenEnv != "":
		v := strings.TrimSpace(os.Getenv(c.TokenEnv))
		if v == "" {
			return Token{}, fmt.Errorf("writeback: credentials.tokenEnv: $%s is empty or unset: set it to the push token", c.TokenEnv)
		}
		return tokenOf(c.Username, v, "$"+c.TokenEnv)
	case c.TokenFile != "":
		f, err := os.Open(c.TokenFile)
		if err != nil {
			return Token{}, fmt.Errorf("writeback: credentials.tokenFile: %w", err)
		}
		defer f.Close()
		buf, err := io.ReadAll(io.LimitReader(f, maxTokenFileBytes+1))
		if err != nil {
			return Token{}, fmt.Errorf("writeback: credentials.tokenFile %s: %w", c.TokenFile, err)
		}
		if len(buf) > maxTokenFileBytes {
			return Token{}, fmt.Errorf("writeback: credentials.tokenFile %s: more than %d bytes: the file must hold the token alone", c.TokenFile, maxTokenFileBytes)
		}
		v := strings.TrimSpace(string(buf))
		if v == "" {
			return Token{}, fmt.Errorf("writeback: credentials.tokenFile %s is empty: write the push token into it", c.TokenFile)
		}
		return tokenOf(c.Username, v, c.TokenFile)
	}
	return Token{}, nil
}

func tokenOf(user, v, where string) (Token, error) {
	if !utf8.ValidString(v) || strings.ContainsAny(v, "\r\n\x00") {
		return Token{}, fmt.Errorf("writeback: credentials: the token in %s holds a line break or invalid bytes: it must be one line", where)
	}
	return NewToken(user, v), nil
}
