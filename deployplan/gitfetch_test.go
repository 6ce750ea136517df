package deployplan

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/hanzoai/deploy-web/envconfig"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gitHTTPServer serves the repository in dir over git's smart HTTP
// protocol, in process (go-git's upload-pack server: no shallow support).
func gitHTTPServer(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := transport.NewEndpoint("file:///repo")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.NewServer(server.MapLoader{ep.String(): repo.Storer})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, err := srv.NewUploadPackSession(ep, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer sess.Close()
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/info/refs"):
			ar, err := sess.AdvertisedReferencesContext(r.Context())
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			ar.Prefix = [][]byte{[]byte("# service=git-upload-pack"), pktline.Flush}
			w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
			_ = ar.Encode(w)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			req := packp.NewUploadPackRequest()
			if err := req.Decode(r.Body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			resp, err := sess.UploadPack(r.Context(), req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			defer resp.Close()
			w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
			_ = resp.Encode(w)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestFetchRemote fetches a repository over HTTP in memory (a branch and a
// commit), under the recording shims; refuses a pack over the byte limit;
// and gives up on a server that accepts and never answers within the
// source timeout.
func TestFetchRemote(t *testing.T) {
	logFile := shimPATH(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/kustomization.yaml": "resources: [cm.yaml]\n",
		"k/cm.yaml":            okCM,
		"catalog.json":         `{"commit": "` + commitA + `", "services": []}`,
	})
	head := commitAll(t, dir)
	ts := gitHTTPServer(t, dir)

	for _, ref := range []string{"master", head} {
		env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: ts.URL + "/repo.git", Ref: ref, Path: "k"}, Catalog: "catalog.json"}
		r, err := Render(context.Background(), env)
		if err != nil {
			t.Fatalf("Render(http %s) = %v", ref, err)
		}
		if r.Commit != head || len(r.Objects) != 1 || r.Catalog.Commit != commitA {
			t.Errorf("Render(http %s) = commit %s, %d objects; want %s, 1", ref, r.Commit, len(r.Objects), head)
		}
	}

	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: ts.URL + "/repo.git", Ref: "master", Path: "k"}, Catalog: "catalog.json",
		Limits: envconfig.Limits{MaxRepoBytes: 300}}
	_, err := Render(context.Background(), env)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Max != 300 || tl.Unit != "bytes" {
		t.Errorf("Render(pack over 300 bytes) = %v, want a TooLargeError", err)
	}

	hang, accepted := hangListener(t)
	env = &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "http://" + hang + "/repo.git", Ref: "main", Path: "k"}, Catalog: "catalog.json",
		Limits: envconfig.Limits{SourceTimeout: metav1.Duration{Duration: 200 * time.Millisecond}}}
	_, err = Render(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "no complete answer within 200ms (limits.sourceTimeout)") {
		t.Errorf("Render(never-answering git server) = %v, want a source timeout", err)
	}
	if accepted.Load() == 0 {
		t.Error("the never-answering git server was never reached: the test proves nothing")
	}
	if b, err := os.ReadFile(logFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a program ran while fetching: %q", b)
	}
}

func TestPlanFetch(t *testing.T) {
	h1 := plumbing.NewHash("1111111111111111111111111111111111111111")
	h2 := plumbing.NewHash("2222222222222222222222222222222222222222")
	h3 := plumbing.NewHash("3333333333333333333333333333333333333333")
	h4 := plumbing.NewHash("4444444444444444444444444444444444444444")
	refs := map[plumbing.ReferenceName]*plumbing.Reference{
		"refs/heads/main":   plumbing.NewHashReference("refs/heads/main", h1),
		"refs/tags/v1":      plumbing.NewHashReference("refs/tags/v1", h2),
		"HEAD":              plumbing.NewSymbolicReference("HEAD", "refs/heads/main"),
		"refs/pull/7/head":  plumbing.NewHashReference("refs/pull/7/head", h4),
		"refs/heads/pull/9": plumbing.NewHashReference("refs/heads/pull/9", h2),
	}
	caps := func(cs ...capability.Capability) *capability.List {
		l := capability.NewList()
		for _, c := range cs {
			if err := l.Set(c); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	tests := []struct {
		name        string
		caps        *capability.List
		ref         string
		wantWants   []plumbing.Hash
		wantShallow bool
		wantErr     bool
	}{
		{"branch, shallow server", caps(capability.Shallow), "main", []plumbing.Hash{h1}, true, false},
		{"branch, no shallow", caps(), "main", []plumbing.Hash{h1}, false, false},
		{"tag", caps(capability.Shallow), "v1", []plumbing.Hash{h2}, true, false},
		{"HEAD", caps(capability.Shallow), "HEAD", []plumbing.Hash{h1}, true, false},
		{"commit by hash allowed", caps(capability.Shallow, capability.AllowReachableSHA1InWant), h3.String(), []plumbing.Hash{h3}, true, false},
		{"commit by hash, tip only", caps(capability.Shallow, capability.AllowTipSHA1InWant), h3.String(), []plumbing.Hash{h3}, true, false},
		{"commit that is a tip", caps(capability.Shallow), h1.String(), []plumbing.Hash{h1}, true, false},
		{"commit not askable: every branch and tag, full", caps(capability.Shallow), h3.String(), []plumbing.Hash{h1, h2}, false, false},
		{"unknown ref", caps(), "nope", nil, false, true},
		{"pull request head", caps(capability.Shallow), "pull/7", []plumbing.Hash{h4}, true, false},
		{"pull/N is never a branch", caps(capability.Shallow), "pull/9", nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := planFetch(tt.caps, refs, tt.ref)
			if (err != nil) != tt.wantErr {
				t.Fatalf("planFetch(%s) error = %v, want error %v", tt.ref, err, tt.wantErr)
			}
			if len(p.Wants) != len(tt.wantWants) || p.Shallow != tt.wantShallow {
				t.Fatalf("planFetch(%s) = %v shallow %v, want %v shallow %v", tt.ref, p.Wants, p.Shallow, tt.wantWants, tt.wantShallow)
			}
			for i := range p.Wants {
				if p.Wants[i] != tt.wantWants[i] {
					t.Errorf("planFetch(%s).Wants = %v, want %v", tt.ref, p.Wants, tt.wantWants)
				}
			}
		})
	}
}
