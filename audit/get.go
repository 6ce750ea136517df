package audit

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrNotFound is a record that does not exist (or was trimmed).
var ErrNotFound = errors.New("audit: no such record")

// Get reads one record with its manifests and its chain. Manifests whose
// bytes no longer match the hashes the record holds make chain.ok false;
// they are returned only when they match.
func (s *Store) Get(ctx context.Context, id string) (Record, error) {
	stream, _, err := parseID(id)
	if err != nil {
		return Record{}, err
	}
	cm, err := s.kube.ConfigMaps(s.ns).Get(ctx, recordName(id), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Record{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Record{}, fmt.Errorf("audit: read record %s: %w", id, err)
	}
	if cm.Labels[LabelComponent] != ComponentRecord {
		return Record{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	ix := s.idx.Load()
	if ix == nil {
		if ix, err = s.load(ctx, streamSelector(stream)); err != nil {
			return Record{}, err
		}
	}
	e := entryOf(cm, ix.sig)
	ix.mu.RLock()
	rec := ix.recordLocked(e)
	ix.mu.RUnlock()
	if e.bad != "" {
		return rec, nil
	}
	gz, problem, err := s.readManifests(ctx, cm.BinaryData[keyManifests], e.env.Manifests)
	if err != nil {
		return Record{}, err
	}
	if problem != "" {
		if rec.Chain.OK {
			rec.Chain.OK, rec.Chain.Reason = false, fmt.Sprintf("record %s: %s", id, problem)
		}
		return rec, nil
	}
	if gz != nil {
		if rec.Manifests, err = decodeManifests(gz); err != nil {
			return Record{}, fmt.Errorf("audit: record %s: %w", id, err)
		}
	}
	return rec, nil
}

// readManifests returns a record's compressed manifests, from its head or
// its parts, checked against ref; problem says what does not match.
func (s *Store) readManifests(ctx context.Context, inline []byte, ref manifestRef) (gz []byte, problem string, err error) {
	if ref.SHA256 == "" {
		if inline != nil {
			return nil, "it holds manifests its record does not name", nil
		}
		return nil, "", nil
	}
	if len(ref.Parts) == 0 {
		gz = inline
	} else {
		if len(ref.Parts) > maxParts {
			return nil, fmt.Sprintf("it names %d parts, over the limit of %d", len(ref.Parts), maxParts), nil
		}
		for _, p := range ref.Parts {
			cm, err := s.kube.ConfigMaps(s.ns).Get(ctx, p.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil, fmt.Sprintf("part %s is missing", p.Name), nil
			}
			if err != nil {
				return nil, "", fmt.Errorf("audit: read record part %s: %w", p.Name, err)
			}
			b := cm.BinaryData[keyManifests]
			if sha256Hex(b) != p.SHA256 {
				return nil, fmt.Sprintf("part %s was changed: its hash no longer matches", p.Name), nil
			}
			gz = append(gz, b...)
		}
	}
	if int64(len(gz)) != ref.Bytes || sha256Hex(gz) != ref.SHA256 {
		return nil, "its manifests were changed: their hash no longer matches", nil
	}
	return gz, "", nil
}
