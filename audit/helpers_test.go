package audit

import (
	"compress/gzip"
	"fmt"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/internal/sign"
)

const testNS = "deploy-web"

// testKey is the tests' signing key.
const testKey = "deploy-web audit test key, 32+ bytes long"

// testSigner signs with testKey.
func testSigner() *sign.Key { return mustKey(testKey) }

// mustKey is a signing key of k (at least 32 bytes).
func mustKey(k string) *sign.Key {
	g, err := sign.NewKey([]byte(k))
	if err != nil {
		panic(err)
	}
	return g
}

// testStore is a store for what needs no cluster (build, the index).
func testStore(t testing.TB) *Store {
	t.Helper()
	s, err := New(nil, nil, Options{Namespace: testNS, Key: []byte(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testRecord is a record of an apply to environment env of cluster c.
func testRecord(c, env string, at time.Time) Record {
	return Record{
		Time: at.UTC(), Duration: Duration(1500 * time.Millisecond),
		Actor: Actor{Email: "alice@example.com", Subject: "u-alice", Groups: []string{"platform"}},
		Verb:  VerbApply, Cluster: c, Environment: env, Commit: "0123456789abcdef0123456789abcdef01234567",
		RenderedDigest: "sha256:" + fmt.Sprintf("%064d", 7), Outcome: OutcomeSucceeded,
		Blockers: []string{}, Objects: []Object{{Version: "v1", Kind: "ConfigMap", Namespace: env, Name: "settings"}},
	}
}

// testChain is n records of r's stream as they would be stored, chained,
// one minute apart from r.Time, with their stream head.
type testChain struct {
	heads  []*corev1.ConfigMap // heads[i] is record i+1
	hashes []string
	stream string
	key    streamKey
	state  streamState
}

func buildChain(t testing.TB, s *Store, r Record, n int, mutate func(i int, r *Record)) *testChain {
	t.Helper()
	key := streamOf(&r)
	c := &testChain{stream: key.id(), key: key}
	prev := ""
	for i := range n {
		ri := r
		ri.Time = r.Time.Add(time.Duration(i) * time.Minute)
		if mutate != nil {
			mutate(i, &ri)
		}
		head, _, hash, err := s.build(testSigner(), c.stream, int64(i+1), prev, &ri, nil, manifestRef{})
		if err != nil {
			t.Fatal(err)
		}
		head.CreationTimestamp.Time = ri.Time
		c.heads = append(c.heads, head)
		c.hashes = append(c.hashes, hash)
		prev = hash
	}
	c.state = streamState{Version: envelopeVersion, Stream: c.stream, Key: key, Seq: int64(n), Hash: prev}
	return c
}

// headCM is the chain's stream head as stored.
func (c *testChain) headCM() *corev1.ConfigMap { return streamHead(testNS, &c.state, testSigner()) }

// indexOf is an index holding the chains' records and heads.
func indexOf(chains ...*testChain) *index {
	ix := newIndex(testSigner())
	for _, c := range chains {
		ix.put(c.headCM())
		for _, h := range c.heads {
			ix.put(h)
		}
	}
	return ix
}

func configMapManifest(ns, name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     data,
	}}
}

// testTime is the tests' fixed clock reading.
func testTime() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }

func newGzip(w io.Writer) *gzip.Writer { return gzip.NewWriter(w) }
