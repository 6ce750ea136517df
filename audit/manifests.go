package audit

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Size limits of stored manifests. A head holds at most SplitBytes of
// manifests (a ConfigMap holds at most 1 MiB, its annotations apart);
// beyond that they go in parts of PartBytes. Manifests over
// MaxManifestBytes compressed are not stored (the record says so);
// reading refuses more than MaxManifestJSONBytes once decompressed.
const (
	SplitBytes           = 900 << 10
	PartBytes            = 900 << 10
	MaxManifestBytes     = 16 << 20
	MaxManifestJSONBytes = 64 << 20
	maxParts             = (MaxManifestBytes + PartBytes - 1) / PartBytes
)

// encodeManifests is objs, Secrets stripped, as a gzip-compressed JSON
// array.
func encodeManifests(objs []*unstructured.Unstructured) ([]byte, error) {
	stripped, err := StripSecrets(objs)
	if err != nil {
		return nil, err
	}
	arr := make([]map[string]any, len(stripped))
	for i, o := range stripped {
		arr[i] = o.Object
	}
	js, err := json.Marshal(arr)
	if err != nil {
		return nil, fmt.Errorf("audit: encode manifests: %w", err)
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := w.Write(js); err != nil {
		return nil, fmt.Errorf("audit: compress manifests: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("audit: compress manifests: %w", err)
	}
	return gz.Bytes(), nil
}

// errTooLarge is manifests decompressing past MaxManifestJSONBytes.
var errTooLarge = errors.New("audit: manifests decompress to more than 64 MiB")

// decodeManifests reverses encodeManifests, refusing (never truncating)
// more than MaxManifestJSONBytes of JSON: a gzip bomb written by someone
// else costs at most that.
func decodeManifests(gz []byte) ([]*unstructured.Unstructured, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("audit: manifests are not gzip: %w", err)
	}
	js, err := io.ReadAll(io.LimitReader(r, MaxManifestJSONBytes+1))
	if err != nil {
		return nil, fmt.Errorf("audit: decompress manifests: %w", err)
	}
	if len(js) > MaxManifestJSONBytes {
		return nil, errTooLarge
	}
	var arr []map[string]any
	if err := json.Unmarshal(js, &arr); err != nil {
		return nil, fmt.Errorf("audit: manifests are not a JSON array of objects: %w", err)
	}
	out := make([]*unstructured.Unstructured, len(arr))
	for i, o := range arr {
		out[i] = &unstructured.Unstructured{Object: o}
	}
	return out, nil
}

// splitParts cuts gz into PartBytes pieces.
func splitParts(gz []byte) [][]byte {
	var parts [][]byte
	for len(gz) > 0 {
		n := min(len(gz), PartBytes)
		parts = append(parts, gz[:n])
		gz = gz[n:]
	}
	return parts
}
