package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Limits of a delivery log.
const (
	// LogEntries is how many deliveries a subscription's log keeps.
	LogEntries = 100
	// sentKeys is how many dedup keys a subscription's log keeps, so that
	// a restart does not send those messages again.
	sentKeys = 500
	logKey   = "log.json"
	sentKey  = "sent.json"
	// logPrefix names a subscription's delivery log ConfigMap.
	logPrefix = "deploy-web-notify-log-"
	// LabelSubscription names the subscription of a delivery log.
	LabelSubscription = "deploy-web.hanzo.ai/subscription"
)

// LogEntry is one delivery as the log keeps it. Error is redacted: it
// never holds the Secret's value.
type LogEntry struct {
	Time      time.Time   `json:"time"`
	Trigger   TriggerType `json:"trigger"`
	App       string      `json:"app,omitempty"`
	Status    int         `json:"status"`
	LatencyMS int64       `json:"latencyMs"`
	Attempts  int         `json:"attempts"`
	Error     string      `json:"error,omitempty"`
}

// sent is a dedup key and when its message went out.
type sent struct {
	Key  string    `json:"key"`
	Time time.Time `json:"time"`
}

// logBatch is what one flush adds to a subscription's log.
type logBatch struct {
	entries []LogEntry
	sent    []sent
}

func logConfigMap(id string) string { return logPrefix + id }

// DeliveryLog returns the subscription's last deliveries, newest first,
// as last flushed (the sender writes in batches).
func (s *Store) DeliveryLog(ctx context.Context, id string) ([]LogEntry, error) {
	cm, err := s.kube.CoreV1().ConfigMaps(s.ns).Get(ctx, logConfigMap(id), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notify: read delivery log %s/%s: %w", s.ns, logConfigMap(id), err)
	}
	entries, _, err := decodeLog(cm)
	if err != nil {
		return nil, err
	}
	slices.Reverse(entries)
	return entries, nil
}

// sentKeys returns the dedup keys every delivery log holds.
func (s *Store) sentKeys(ctx context.Context) ([]sent, error) {
	sel := labels.Set{LabelManagedBy: managedBy, LabelComponent: componentLog}.String()
	list, err := s.kube.CoreV1().ConfigMaps(s.ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("notify: list delivery logs in %s: %w", s.ns, err)
	}
	var all []sent
	for i := range list.Items {
		_, keys, err := decodeLog(&list.Items[i])
		if err != nil {
			return nil, err
		}
		all = append(all, keys...)
	}
	return all, nil
}

// appendLog adds b to the subscription's log, keeping the newest
// LogEntries entries and sentKeys keys, on the resourceVersion it read.
func (s *Store) appendLog(ctx context.Context, id string, b logBatch) error {
	cms := s.kube.CoreV1().ConfigMaps(s.ns)
	name := logConfigMap(id)
	for range maxConflicts {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		create := apierrors.IsNotFound(err)
		if err != nil && !create {
			return fmt.Errorf("notify: read delivery log %s/%s: %w", s.ns, name, err)
		}
		var entries []LogEntry
		var keys []sent
		if create {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns, Labels: map[string]string{
				LabelManagedBy: managedBy, LabelComponent: componentLog, LabelSubscription: id}}}
		} else if entries, keys, err = decodeLog(cm); err != nil {
			return err
		}
		entries = append(entries, b.entries...)
		entries = entries[max(0, len(entries)-LogEntries):]
		keys = append(keys, b.sent...)
		keys = keys[max(0, len(keys)-sentKeys):]
		eb, err := marshal(entries)
		if err != nil {
			return err
		}
		kb, err := marshal(keys)
		if err != nil {
			return err
		}
		cm.Data = map[string]string{logKey: string(eb), sentKey: string(kb)}
		if create {
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: FieldManager})
		} else {
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: FieldManager})
		}
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("notify: write delivery log %s/%s: %w", s.ns, name, err)
		}
		return nil
	}
	return fmt.Errorf("notify: delivery log %s/%s changed under %d writes in a row", s.ns, name, maxConflicts)
}

func decodeLog(cm *corev1.ConfigMap) ([]LogEntry, []sent, error) {
	var entries []LogEntry
	var keys []sent
	if raw, ok := cm.Data[logKey]; ok {
		if err := json.Unmarshal([]byte(raw), &entries); err != nil {
			return nil, nil, fmt.Errorf("notify: delivery log %s/%s key %s: %v: delete the ConfigMap to start it afresh", cm.Namespace, cm.Name, logKey, err)
		}
	}
	if raw, ok := cm.Data[sentKey]; ok {
		if err := json.Unmarshal([]byte(raw), &keys); err != nil {
			return nil, nil, fmt.Errorf("notify: delivery log %s/%s key %s: %v: delete the ConfigMap to start it afresh", cm.Namespace, cm.Name, sentKey, err)
		}
	}
	return entries, keys, nil
}
