package static

import (
	"strings"
	"testing"
)

// TestStylesheetBalanced: every block of app.css is closed where it
// ends. A brace lost in a merge silently swallows every rule after it
// into a media query (the timeline's chart once drew as a black box).
func TestStylesheetBalanced(t *testing.T) {
	b, err := FS.ReadFile("app.css")
	if err != nil {
		t.Fatal(err)
	}
	depth, line := 0, 1
	inComment := false
	s := string(b)
	for i := 0; i < len(s); i++ {
		switch {
		case inComment:
			if strings.HasPrefix(s[i:], "*/") {
				inComment = false
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			inComment = true
			i++
		case s[i] == '{':
			depth++
		case s[i] == '}':
			depth--
			if depth < 0 {
				t.Fatalf("app.css line %d: a } closes no block", line)
			}
		case s[i] == '@' && depth > 0 && strings.HasPrefix(s[i:], "@media"):
			t.Errorf("app.css line %d: @media inside another block (a block above is not closed)", line)
		}
		if s[i] == '\n' {
			line++
		}
	}
	if depth != 0 {
		t.Errorf("app.css ends %d block(s) deep: a block is not closed", depth)
	}
}
