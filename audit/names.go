package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hanzoai/deploy-web/appcr"
)

// Names, labels and annotations of the stored objects. Nothing a user or a
// manifest chose goes into a name; label values go through labelValue.
const (
	namePrefix = "deploy-web-audit-"

	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelComponent = "app.kubernetes.io/component"
	managedBy      = appcr.FieldManager

	// Component label values: a record head, a part of a record's
	// manifests, a stream head.
	ComponentRecord = "audit-record"
	ComponentPart   = "audit-part"
	ComponentStream = "audit-stream"
	// ComponentKey labels the signing key's Secret.
	ComponentKey = "audit-key"

	LabelStream      = "deploy-web.hanzo.ai/audit-stream"
	LabelVerb        = "deploy-web.hanzo.ai/audit-verb"
	LabelOutcome     = "deploy-web.hanzo.ai/audit-outcome"
	LabelCluster     = "deploy-web.hanzo.ai/audit-cluster"
	LabelEnvironment = "deploy-web.hanzo.ai/audit-environment"
	LabelApp         = "deploy-web.hanzo.ai/audit-app"
	LabelActor       = "deploy-web.hanzo.ai/audit-actor"
	// LabelRecord on a part names its record's ID.
	LabelRecord = "deploy-web.hanzo.ai/audit-record"

	// AnnotationRecord on a record head holds the stored record (the
	// envelope): the bytes the chain hashes.
	AnnotationRecord = "deploy-web.hanzo.ai/audit-record"
	// AnnotationStream on a stream head holds its state (streamState).
	AnnotationStream = "deploy-web.hanzo.ai/audit-stream"

	// keyManifests is the binaryData key of inline manifests and of a
	// part's bytes.
	keyManifests = "manifests.json.gz"
)

// streamKey identifies a stream: an environment of a cluster, or an App
// (namespace/name) of a cluster outside environments. Refused records
// have a stream of their own beside each (Refused), chained and retained
// apart (Retention.Refused), so that refusals, however many, never push
// a write's record out of retention.
type streamKey struct {
	Cluster, Environment, Namespace, App string
	Refused                              bool `json:",omitempty"`
}

// streamOf is the stream of r.
func streamOf(r *Record) streamKey {
	k := streamKey{Cluster: r.Cluster, Namespace: r.Namespace, App: r.App}
	if r.Environment != "" {
		k = streamKey{Cluster: r.Cluster, Environment: r.Environment}
	}
	k.Refused = r.Outcome == OutcomeRefused
	return k
}

// inStream reports whether r may be a record of stream: its own, or, for
// a refused record, the stream of writes that a deploy-web before refused
// streams put it in.
func inStream(r *Record, stream string) bool {
	k := streamOf(r)
	if k.id() == stream {
		return true
	}
	k.Refused = false
	return r.Outcome == OutcomeRefused && k.id() == stream
}

// id is the stream's id: 16 hex digits of a SHA-256 over its parts, so any
// text (a hostile environment name included) becomes a DNS-safe name
// fragment. Two streams colliding is checked where it matters (Append
// compares the head's stream with the record's).
func (k streamKey) id() string {
	parts := []string{"deploy-web audit stream v1", k.Cluster, k.Environment, k.Namespace, k.App}
	if k.Refused {
		parts = append(parts, "refused")
	}
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// recordID is a record's ID: its stream and its sequence number, zero
// padded so IDs of a stream sort in order.
func recordID(stream string, seq int64) string {
	return fmt.Sprintf("%s-%010d", stream, seq)
}

var idRE = regexp.MustCompile(`^([0-9a-f]{16})-([0-9]{10})$`)

// parseID splits a record ID; anything else, hostile input included, is an
// error naming the expected form.
func parseID(id string) (stream string, seq int64, err error) {
	m := idRE.FindStringSubmatch(id)
	if m == nil {
		if len(id) > 64 {
			id = id[:64] + "…"
		}
		return "", 0, &IDError{ID: id, problem: " is not <16 hex>-<10 digits>"}
	}
	seq, err = strconv.ParseInt(m[2], 10, 64)
	if err != nil || seq < 1 {
		return "", 0, &IDError{ID: id, problem: ": sequence number must be 1 or more"}
	}
	return m[1], seq, nil
}

func recordName(id string) string         { return namePrefix + id }
func streamHeadName(stream string) string { return namePrefix + stream }

// partName names part i of a record; suffix (hex of the record's
// manifests hash) keeps the parts of two writers racing for the same
// sequence number apart.
func partName(id string, i int, suffix string) string {
	return fmt.Sprintf("%s%s-p%02d-%s", namePrefix, id, i, suffix)
}

// hashedPrefix marks a label value that is a hash of the real value.
const hashedPrefix = "h-"

var hashedRE = regexp.MustCompile(`^h-[0-9a-f]{40}$`)

// labelValue is v as a label value: v itself when it is a valid label
// value (63 characters of [A-Za-z0-9_.-], alphanumeric at both ends) that
// does not look like a hashed one, else "h-" and 40 hex digits of its
// SHA-256. A selector on a field uses labelValue of the wanted value; the
// exact value is compared again in memory.
func labelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 && !hashedRE.MatchString(v) {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return hashedPrefix + hex.EncodeToString(sum[:20])
}

// recordLabels are the labels of a record head.
func recordLabels(r *Record, stream string) map[string]string {
	return map[string]string{
		LabelManagedBy:   managedBy,
		LabelComponent:   ComponentRecord,
		LabelStream:      stream,
		LabelVerb:        labelValue(string(r.Verb)),
		LabelOutcome:     labelValue(string(r.Outcome)),
		LabelCluster:     labelValue(r.Cluster),
		LabelEnvironment: labelValue(r.Environment),
		LabelApp:         labelValue(r.App),
		LabelActor:       labelValue(r.Actor.Key()),
	}
}

// ValidID reports whether id has the form of a record id (a stream and a
// sequence number): Get answers anything else with an error that is not
// ErrNotFound.
func ValidID(id string) bool {
	_, _, err := parseID(id)
	return err == nil
}

// IDError is a record id that is not one: the caller's mistake, not the
// store's failure.
type IDError struct {
	ID      string
	problem string
}

func (e *IDError) Error() string { return "audit: record id " + strconv.Quote(e.ID) + e.problem }
