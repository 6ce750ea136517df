package main

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/internal/labels"
	"github.com/hanzoai/deploy-web/timeline"
)

// TestShardWrites counts the shard writes made during the window (not
// another ConfigMap's), with the work's own count.
func TestShardWrites(t *testing.T) {
	cs := fake.NewClientset()
	shard := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: timelineNamespace,
			Labels: map[string]string{labels.Kind: timeline.KindValue}}, BinaryData: map[string][]byte{timeline.DataKey: []byte("0123456789")}}
	}
	ctx := t.Context()
	if _, err := cs.CoreV1().ConfigMaps(timelineNamespace).Create(ctx, shard(timeline.ShardName(0)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writes, done, err := shardWrites(ctx, cs, timelineNamespace, 2*time.Second, func(ctx context.Context) int {
		cms := cs.CoreV1().ConfigMaps(timelineNamespace)
		_, _ = cms.Create(ctx, shard(timeline.ShardName(1)), metav1.CreateOptions{})
		s0 := shard(timeline.ShardName(0))
		s0.BinaryData[timeline.DataKey] = []byte("01234567890123456789")
		_, _ = cms.Update(ctx, s0, metav1.UpdateOptions{})
		_, _ = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: timelineNamespace}}, metav1.CreateOptions{})
		return 3
	})
	if err != nil || writes != 2 || done != 3 {
		t.Errorf("shardWrites() = %d, %d, %v; want 2 shard writes, the work's 3", writes, done, err)
	}
	bytes, shards, err := storedShards(ctx, cs, timelineNamespace)
	if err != nil || bytes != 30 || shards != 2 {
		t.Errorf("storedShards() = %d bytes, %d shards, %v; want 30, 2", bytes, shards, err)
	}
}

func TestRenderTimeline(t *testing.T) {
	out := renderResults([]result{
		{apps: 2000, total: 2014, timeline: &timelineResult{window: 30 * time.Second, drained: true, restWrites: 0, churnWrites: 29, patches: 600, storedBytes: 20140, shards: 120}},
		{apps: 10000, total: 10014},
	}, 30)
	for _, want := range []string{
		"| timeline shard writes/s at rest (budget 0) | 0.00 (0 in 30s; after the start's entries were written) | - (not measured) |",
		"| timeline shard writes/s under churn (budget at most 1) | 0.97 (29 in 30s, while 600 App images were patched) |",
		"in 120 shards; 10 KB per 1,000 Apps |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("renderResults lacks %q:\n%s", want, out)
		}
	}
}
