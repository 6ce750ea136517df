package search

import "testing"

// TestDigest: a digest never rules out an App one of whose objects
// matches (every query of the table against every subset of objects),
// and it does rule out Apps that cannot match, so a search skips them.
func TestDigest(t *testing.T) {
	objs := []Object{
		{Kind: "ConfigMap", Name: "web-cfg", Labels: map[string]string{"tier": "web", "team": "shop"}},
		{Group: "apps", Kind: "Deployment", Name: "web", Images: []string{"Registry.test/Web:1.2.0", "sidecar:3"}},
		{Kind: "Pod", Name: "web-5d8f-abcde", Images: []string{"registry.test/web:1.1.0"}},
	}
	queries := []string{
		"web", "cfg", "web cfg", "kind:configmap", "kind:ConfigMap kind:Pod", "name:web", "name:web-*", "name:*cfg",
		"name:w*-abc*", "label:tier=web", "label:tier=db", "label:team", "label:tier=web label:tier=db", "image:web:1.2",
		"image:sidecar", "image:registry.test/web", "kind:Pod image:1.2", "kind:Deployment name:web", "zzz", "kind:Job",
		"name:api", "label:app", "image:nginx", "label:tier=we",
	}
	for _, s := range queries {
		q := mustParse(t, s)
		for mask := 1; mask < 1<<len(objs); mask++ {
			var sub []Object
			for i := range objs {
				if mask&(1<<i) != 0 {
					sub = append(sub, objs[i])
				}
			}
			matches := false
			for i := range sub {
				matches = matches || q.Match(&sub[i])
			}
			if matches && !q.mayMatch(digestFor(sub)) {
				t.Errorf("query %q: the digest of %d objects rules out an App with a match", s, len(sub))
			}
		}
	}
	d := digestFor(objs)
	for _, s := range []string{"zzz", "kind:Job", "name:api", "label:app", "image:nginx", "label:tier=we", "name:x*"} {
		if q := mustParse(t, s); q.mayMatch(d) {
			t.Errorf("query %q: the digest lets the App through, want it ruled out", s)
		}
	}
}

// digestFor is the Digest an Index keeps for an App of objs.
func digestFor(objs []Object) *Digest {
	s := digestOf(objs)
	return &Digest{names: s[fieldNames], kinds: s[fieldKinds], labels: s[fieldLabels], images: s[fieldImages]}
}
