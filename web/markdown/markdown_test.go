package markdown

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestRenderHostile: hostile Markdown (script tags, event handlers,
// javascript:, data: and relative links, images, HTML entities that spell
// a scheme) renders as text or safe links, never as markup of its own.
func TestRenderHostile(t *testing.T) {
	r := New()
	tests := []struct {
		name string
		src  string
		// want must appear in the HTML; never must not.
		want  []string
		never []string
	}{
		{"script tag", "fix <script>alert(1)</script> now", []string{"fix", "now"}, []string{"<script", "alert(1)</script>"}},
		{"script block", "<script>\nalert(1)\n</script>\n", nil, []string{"<script"}},
		{"event handler", `<img src=x onerror="alert(1)">`, nil, []string{"<img", "onerror"}},
		{"iframe", "<iframe src=https://evil.example></iframe>", nil, []string{"<iframe"}},
		{"javascript link", "[click](javascript:alert(1))", []string{"click"}, []string{"javascript:", "<a"}},
		{"javascript link in upper case", "[click](JAVASCRIPT:alert(1))", []string{"click"}, []string{"JAVASCRIPT:", "<a"}},
		{"entity-spelled scheme", "[click](&#106;avascript:alert(1))", []string{"click"}, []string{"avascript:", "<a"}},
		{"data link", "[x](data:text/html;base64,PHNjcmlwdD4=)", []string{"x"}, []string{"data:", "<a"}},
		{"vbscript autolink", "<vbscript:msgbox(1)>", nil, []string{"<a"}},
		{"relative link", "[up](../../admin)", []string{"up"}, []string{"<a", "../../admin\""}},
		{"image", "![pixel](https://track.example/p.gif)", []string{"pixel"}, []string{"<img", "track.example"}},
		{"image in a link", "[![x](https://t.example/a.png)](https://ok.example)", []string{`href="https://ok.example"`}, []string{"<img"}},
		{"https link", "[docs](https://docs.example/a?b=1&c=2)", []string{`<a href="https://docs.example/a?b=1&amp;c=2" rel="noopener nofollow">docs</a>`}, nil},
		{"bare URL", "see https://ci.example/run/42 for logs", []string{`href="https://ci.example/run/42"`, `rel="noopener nofollow"`}, nil},
		{"mail autolink", "<ops@example.com>", []string{`href="mailto:ops@example.com"`, `rel="noopener nofollow"`}, nil},
		{"attribute break-out in a URL", `[x](https://a.example/"onmouseover="alert(1))`, nil, []string{`"onmouseover="`}},
		{"markdown still works", "**bold** and `code` and ~~gone~~", []string{"<strong>bold</strong>", "<code>code</code>", "<del>gone</del>"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut, err := r.Render(tt.src)
			if err != nil || cut {
				t.Fatalf("Render(%q) = %v, cut %v", tt.src, err, cut)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Render(%q) = %q, want it to contain %q", tt.src, got, w)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(got, n) {
					t.Errorf("Render(%q) = %q, holds %q", tt.src, got, n)
				}
			}
			checkSafeHTML(t, got)
		})
	}
}

// checkSafeHTML parses out and fails on any element outside the small
// set Render emits, any on* attribute, and any link not http(s)/mailto
// or without rel="noopener nofollow".
func checkSafeHTML(t *testing.T, out string) {
	t.Helper()
	allowed := map[string]bool{"p": true, "a": true, "strong": true, "em": true, "code": true, "pre": true, "del": true,
		"ul": true, "ol": true, "li": true, "blockquote": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
		"hr": true, "br": true, "html": true, "head": true, "body": true}
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if !allowed[n.Data] {
				t.Errorf("rendered HTML holds a <%s> element: %q", n.Data, out)
			}
			attrs := map[string]string{}
			for _, a := range n.Attr {
				attrs[a.Key] = a.Val
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("rendered HTML holds an %s attribute: %q", a.Key, out)
				}
			}
			if n.Data == "a" && (!AllowedURL(attrs["href"]) || attrs["rel"] != relLink) {
				t.Errorf("rendered link href %q rel %q, want http(s)/mailto and %q", attrs["href"], attrs["rel"], relLink)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

// TestRenderHuge: input past MaxBytes is cut and said so; deeply nested
// or repeated constructs render without blowing up.
func TestRenderHuge(t *testing.T) {
	r := New()
	tests := []struct {
		name string
		src  string
		cut  bool
	}{
		{"long text", strings.Repeat("word ", 4*MaxBytes), true},
		{"many lines", strings.Repeat("- item <script>x</script>\n", MaxBytes/8), true},
		{"deep quotes", strings.Repeat(">", MaxBytes-1), false},
		{"deep lists", strings.Repeat("- ", MaxBytes/2-1), false},
		{"deep quotes on every line", strings.Repeat(strings.Repeat("> ", 200)+"x\n", MaxBytes/500), false},
		{"deep brackets", strings.Repeat("[", MaxBytes/2) + strings.Repeat("](javascript:x)", MaxBytes/64), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut, err := r.Render(tt.src)
			if err != nil || cut != tt.cut {
				t.Fatalf("Render(%d bytes) = cut %v, %v; want cut %v", len(tt.src), cut, err, tt.cut)
			}
			if strings.Contains(got, "<script") || strings.Contains(got, `href="javascript`) {
				t.Errorf("Render(%s) holds a script or a javascript: link", tt.name)
			}
			checkSafeHTML(t, got)
		})
	}
}

func TestAllowedURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://a.example/x": true, "http://a.example": true, "mailto:a@example.com": true, "HTTPS://A.EXAMPLE": true,
		"javascript:alert(1)": false, "//a.example": false, "/admin": false, "https:///x": false, "mailto:": false,
		"data:text/html,x": false, "ftp://a.example": false, " javascript:x": false, "": false,
	} {
		if got := AllowedURL(u); got != want {
			t.Errorf("AllowedURL(%q) = %v, want %v", u, got, want)
		}
	}
}
