package handlers

import (
	"html"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// visibleText is what a browser shows of renderYAML's output without the
// line numbers: the text of each line's code cell, unescaped.
func visibleText(t *testing.T, out string) string {
	t.Helper()
	if !strings.HasPrefix(out, `<pre class="chroma"><code>`) || !strings.HasSuffix(out, `</code></pre>`) {
		t.Fatalf("not a code block: %.80q", out)
	}
	cells := regexp.MustCompile(`(?s)<span class="cl">(.*?)\n</span></span>`).FindAllStringSubmatch(out, -1)
	tags := regexp.MustCompile(`<[^>]*>`)
	var lines []string
	for _, c := range cells {
		lines = append(lines, html.UnescapeString(tags.ReplaceAllString(c[1], "")))
	}
	return strings.Join(lines, "\n")
}

// TestHighlightYAMLKeepsEveryByte: whatever src holds (markup, quotes,
// broken YAML, control characters), the text of the highlighted lines is
// src, every < and & is escaped, and the line numbers link to themselves.
func TestHighlightYAMLKeepsEveryByte(t *testing.T) {
	cases := []string{
		"",
		"a: b",
		"a: b\n",
		"kind: Deployment\nmetadata:\n  name: web\n  annotations:\n    x: '<script>alert(1)</script>'\n    y: \"a \\\" </span> & b\"\n",
		"data:\n  cfg: |\n    <b>not a key: x</b>\n    # not a comment\n\n  next: 1 # a comment\n",
		"- |\n  text: here\n- - b\n  - \"c\n  d\"\n-\n",
		"key: [a, b] # x\n{x: y}\n\"q: k\": v\n'it''s': 2\n: x\n#c\n  # c2\n",
		"\t: x\r\nbad\x00byte: \xff\xfe\n",
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab:- #|>'\"\\\n<&>[]{}0123.e\t")
	for range 300 {
		n := r.IntN(120)
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(buf))
	}
	for _, src := range cases {
		out := renderYAML(src)
		want := strings.TrimSuffix(src, "\n")
		if src == "\n" {
			want = ""
		}
		if got := visibleText(t, out); got != want {
			t.Fatalf("text of %q:\n got %q\nwant %q\n%s", src, got, want, out)
		}
		if strings.Contains(tagsOff(out), "<") {
			t.Fatalf("unescaped < in the output of %q:\n%s", src, out)
		}
		lines := strings.Count(want, "\n") + 1
		if got := strings.Count(out, `<span class="line">`); got != lines {
			t.Fatalf("%q: %d lines, want %d", src, got, lines)
		}
		if lines > 0 && !strings.Contains(out, `<span class="ln" id="L1"><a class="lnlinks" href="#L1">`) {
			t.Fatalf("%q: no linkable line number 1:\n%s", src, out)
		}
	}
}

// tagsOff removes the highlighter's own tags, leaving escaped text.
func tagsOff(out string) string {
	own := regexp.MustCompile(`</?(pre|code|span|a)( (class|id|href)="[^"<>]*")*>`)
	return own.ReplaceAllString(out, "")
}

// TestHighlightYAMLClasses: keys, punctuation, strings, numbers, booleans,
// nulls and comments get their classes; a block scalar's lines are text,
// even when they look like keys or comments.
func TestHighlightYAMLClasses(t *testing.T) {
	src := `apiVersion: apps/v1
# a comment
metadata:
  labels:
    tier: "web"
  replicas: 3
  ratio: 0.5
  paused: false
  owner: null
  name: 'q' # why
spec:
  - name: app
    script: |-
      echo: hi
      # not a comment
    after: 1e3
`
	out := renderYAML(src)
	for _, want := range []string{
		`<span class="nt">apiVersion</span><span class="p">:</span> <span class="l">apps/v1</span>`,
		`<span class="c"># a comment</span>`,
		`    <span class="nt">tier</span><span class="p">:</span> <span class="s">&#34;web&#34;</span>`,
		`<span class="nt">replicas</span><span class="p">:</span> <span class="m">3</span>`,
		`<span class="m">0.5</span>`,
		`<span class="nt">paused</span><span class="p">:</span> <span class="kc">false</span>`,
		`<span class="kc">null</span>`,
		`<span class="s">&#39;q&#39;</span> <span class="c"># why</span>`,
		`  <span class="p">-</span> <span class="nt">name</span><span class="p">:</span> <span class="l">app</span>`,
		`<span class="nt">script</span><span class="p">:</span> <span class="p">|-</span>`,
		`<span class="cl">      echo: hi` + "\n",
		`<span class="cl">      # not a comment` + "\n",
		`    <span class="nt">after</span><span class="p">:</span> <span class="m">1e3</span>`,
		`<span class="ln" id="L16"><a class="lnlinks" href="#L16">16</a></span>`,
		`<span class="ln" id="L1"><a class="lnlinks" href="#L1"> 1</a></span>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
}

func BenchmarkHighlightYAML(b *testing.B) {
	var sb strings.Builder
	for i := range 400 {
		sb.WriteString("  - name: container-" + string(rune('a'+i%26)) + "\n    image: ghcr.io/acme/web:1.2.3\n    ports:\n    - containerPort: 8080\n      protocol: TCP\n")
	}
	src := "spec:\n  containers:\n" + sb.String()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		renderYAML(src)
	}
}
