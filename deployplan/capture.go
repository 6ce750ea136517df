package deployplan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/managedfields"
)

// The pre-apply capture is a folder that `kubectl apply --server-side
// --field-manager=deploy-web -f DIR` and `deploy-web restore --capture DIR`
// both accept: only object files end in .json; the index (CaptureIndexFile,
// JSON Lines) and the instructions (CaptureReadmeFile) have extensions
// kubectl ignores. Each object file holds the fields deploy-web had applied
// to that object before the apply (extracted from its managed fields), so
// re-applying them as deploy-web restores deploy-web's part of the object
// and nothing else; Secrets are never captured (their values are never
// read) and are named in the instructions as a manual step.
const (
	CaptureIndexFile  = "index.jsonl"
	CaptureReadmeFile = "RESTORE.txt"
)

// capturePrefix starts the name of a capture folder: pre-apply-<time>,
// beside the apply's report.
const capturePrefix = "pre-apply-"

// captureEntry is one line of the capture index.
type captureEntry struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Existed    bool   `json:"existed"`
	UID        string `json:"uid,omitempty"`
	File       string `json:"file,omitempty"`
	Note       string `json:"note,omitempty"`
}

// captureInfo is what the capture's instructions name.
type captureInfo struct {
	Env        *envconfig.Environment
	ConfigPath string
	Kubeconfig string // the --kubeconfig flag
	Time       time.Time
	Holder     string
}

// OwnedFields returns the part of a live object that field manager
// manager set with server-side apply (its managedFields entry of
// operation Apply, main resource), plus apiVersion, kind, name and
// namespace: what that manager would apply to get the object as it is. An
// object the manager never applied gives the identity alone.
func OwnedFields(live *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != "Apply" || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		set, err := managedfields.Parse(mf.FieldsV1)
		if err != nil {
			return nil, fmt.Errorf("deployplan: managed fields of %s (manager %s): %w", key(live), manager, err)
		}
		v, _ := extractOwned(live.Object, set)
		if m, ok := v.(map[string]any); ok {
			out.Object = m
		}
	}
	out.SetAPIVersion(live.GetAPIVersion())
	out.SetKind(live.GetKind())
	out.SetName(live.GetName())
	out.SetNamespace(live.GetNamespace())
	return out, nil
}

// extractOwned keeps the parts of v named by the field set (a managed
// fields entry's, managedfields.Parse): a field name a map key, a key the
// list element with those key fields, a value the set element of that
// value, an index the list element at it. A nil or empty set (the node is
// a member and nothing below it is) owns the whole value.
func extractOwned(v any, set *fieldpath.Set) (any, bool) {
	if set == nil || set.Empty() {
		return runtime.DeepCopyJSONValue(v), true
	}
	// Each path element of the set once, with the set below it (nil for a
	// member with nothing below).
	type elem struct {
		pe  fieldpath.PathElement
		sub *fieldpath.Set
	}
	var elems []elem
	for pe := range set.Children.All() {
		sub, _ := set.Children.Get(pe)
		elems = append(elems, elem{pe, sub})
	}
	for pe := range set.Members.All() {
		if _, ok := set.Children.Get(pe); !ok {
			elems = append(elems, elem{pe, nil})
		}
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for _, e := range elems {
			if e.pe.FieldName == nil {
				continue
			}
			name := *e.pe.FieldName
			child, present := x[name]
			if !present {
				continue
			}
			if ev, ok := extractOwned(child, e.sub); ok {
				out[name] = ev
			}
		}
		return out, true
	case []any:
		out := []any{}
		for i, item := range x {
			for _, e := range elems {
				switch {
				case e.pe.Key != nil:
					im, isMap := item.(map[string]any)
					if !isMap || !managedfields.Matches(item, e.pe) {
						continue
					}
					ev, _ := extractOwned(item, e.sub)
					em, _ := ev.(map[string]any)
					if em == nil {
						em = map[string]any{}
					}
					if len(em) == 0 {
						// Owned as an element without fields: its keys
						// name it. Otherwise the key fields it owns are
						// there, and the ones it does not own were
						// defaulted (a port's protocol): sending them
						// would take them over.
						for _, f := range *e.pe.Key {
							em[f.Name] = runtime.DeepCopyJSONValue(im[f.Name])
						}
					}
					out = append(out, em)
				case e.pe.Value != nil:
					if managedfields.Matches(item, e.pe) {
						out = append(out, runtime.DeepCopyJSONValue(item))
					}
				case e.pe.Index != nil && *e.pe.Index == i:
					ev, _ := extractOwned(item, e.sub)
					out = append(out, ev)
				}
			}
		}
		return out, true
	}
	return runtime.DeepCopyJSONValue(v), true
}

// captureFile is one file of a capture that a restore reads (the index or
// an object file) and its content.
type captureFile struct {
	name string
	data []byte
}

// CaptureDigest is "sha256:<hex>" over a capture's canonical content: the
// files a restore reads (the index and the object files, not the
// instructions), sorted by name, each as its name, its length and its
// bytes. An apply records the digest of the capture it wrote
// (recordCapture); a restore recomputes it over what it read.
func captureDigest(files []captureFile) string {
	sorted := slices.Clone(files)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	h := sha256.New()
	for _, f := range sorted {
		fmt.Fprintf(h, "%s\x00%d\n", f.name, len(f.data))
		h.Write(f.data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// writeCapture stores the pre-apply state of every object in dir: one
// JSON manifest per existing object that is not a Secret, holding the
// fields deploy-web had applied to it (OwnedFields), the index of every
// object (existing or not, Secrets included by name) and the restore
// instructions, which name the Secrets to restore by hand. It returns the
// capture's digest (captureDigest).
func writeCapture(dir string, desired []*unstructured.Unstructured, live map[string]*unstructured.Unstructured, info captureInfo) (string, error) {
	if err := PrepareReportsDir(filepath.Dir(dir)); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("deployplan: capture: %w", err)
	}
	var index bytes.Buffer
	var secrets, created, files []string
	var written []captureFile
	for i, d := range desired {
		e := captureEntry{APIVersion: d.GetAPIVersion(), Kind: d.GetKind(), Namespace: d.GetNamespace(), Name: d.GetName()}
		l := live[key(d)]
		switch {
		case l == nil:
			e.Note = "did not exist before the apply"
			created = append(created, d.GetKind()+"/"+d.GetName())
		case isSecret(d):
			e.Existed, e.UID = true, string(l.GetUID())
			e.Note = "Secret: not captured (its values are never read); restore it by hand"
			secrets = append(secrets, d.GetName())
		default:
			e.Existed, e.UID = true, string(l.GetUID())
			c, err := OwnedFields(l, FieldManager)
			if err != nil {
				return "", err
			}
			b, err := json.MarshalIndent(c.Object, "", "  ")
			if err != nil {
				return "", fmt.Errorf("deployplan: capture %s: %w", key(d), err)
			}
			e.File = fmt.Sprintf("%03d-%s-%s.json", i, lower(d.GetKind()), d.GetName())
			b = append(b, '\n')
			files = append(files, e.File)
			written = append(written, captureFile{name: e.File, data: b})
		}
		line, err := json.Marshal(e)
		if err != nil {
			return "", err
		}
		index.Write(append(line, '\n'))
	}
	// The objects' files, in parallel, each synced; then the index,
	// atomically, whose write syncs the folder: a capture without its
	// index is no capture (a restore reads the index first), and no apply writes before
	// writeCapture returns.
	errs := make([]error, len(written))
	forEachBounded(len(written), writeParallelism, func(i int) {
		errs[i] = writeNewFileSynced(filepath.Join(dir, written[i].name), written[i].data)
	})
	if err := firstErr(errs...); err != nil {
		return "", err
	}
	if err := writeFileAtomic(filepath.Join(dir, CaptureIndexFile), index.Bytes()); err != nil {
		return "", err
	}
	written = append(written, captureFile{name: CaptureIndexFile, data: index.Bytes()})
	if err := writeFileAtomic(filepath.Join(dir, CaptureReadmeFile), []byte(captureReadme(dir, info, files, secrets, created))); err != nil {
		return "", err
	}
	return captureDigest(written), nil
}

func captureReadme(dir string, info captureInfo, files, secrets, created []string) string {
	env := info.Env
	var b strings.Builder
	fmt.Fprintf(&b, "Pre-apply capture of environment %s (namespace %s), taken %s by %s.\n\n",
		env.Name, env.Namespace, info.Time.UTC().Format(time.RFC3339), info.Holder)
	fmt.Fprintf(&b, "The %d .json file(s) hold the fields deploy-web had applied to each object\n"+
		"before the apply (taken from its managed fields). Re-applying them as field\n"+
		"manager %s puts deploy-web's part of each object back as it was.\n\n", len(files), FieldManager)
	if len(files) == 0 {
		// kubectl apply -f of a folder without a .json file fails, and a
		// restore would have nothing to put back.
		b.WriteString("Nothing to re-apply: no object but Secrets existed before the apply.\n\n")
	} else {
		b.WriteString("Restore, with the guards of an apply (lock, namespace boundary, reserved\nnames, dry-run first, a report):\n\n")
		fmt.Fprintf(&b, "  %s\n\n", restoreCommand(env, info.ConfigPath, dir))
		b.WriteString("or with kubectl:\n\n")
		fmt.Fprintf(&b, "  %s -n %s apply --server-side --field-manager=%s -f %s\n\n", kubectlPrefix(env, info.Kubeconfig), env.Namespace, FieldManager, quoteArg(dir))
	}
	if len(secrets) > 0 {
		sort.Strings(secrets)
		b.WriteString("Not captured: Secrets. deploy-web never reads their values, so it cannot put\nthem back. Restore each by hand from where its values come from:\n\n")
		for _, s := range secrets {
			fmt.Fprintf(&b, "  Secret/%s\n", s)
		}
		b.WriteString("\n")
	}
	if len(created) > 0 {
		b.WriteString("Did not exist before the apply (a restore leaves them; delete them by hand\nif they must go):\n\n")
		for _, c := range created {
			fmt.Fprintf(&b, "  %s -n %s delete %s\n", kubectlPrefix(env, info.Kubeconfig), env.Namespace, lower(c))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s lists every object (JSON Lines). kubectl applies only the .json files.\n", CaptureIndexFile)
	return b.String()
}

// kubectlPrefix is kubectl with the environment's cluster as configured:
// its kubeconfig (the environment's, else the --kubeconfig flag) and its
// context.
func kubectlPrefix(env *envconfig.Environment, kubeconfig string) string {
	kc := "kubectl"
	if env.Cluster.InCluster {
		return kc
	}
	switch {
	case env.Cluster.Kubeconfig != "":
		kc += " --kubeconfig " + quoteArg(env.Resolve(env.Cluster.Kubeconfig))
	case kubeconfig != "":
		kc += " --kubeconfig " + quoteArg(kubeconfig)
	}
	if env.Cluster.Context != "" {
		kc += " --context " + quoteArg(env.Cluster.Context)
	}
	return kc
}

// restoreCommand is the deploy-web restore of a capture.
func restoreCommand(env *envconfig.Environment, configPath, dir string) string {
	if configPath == "" {
		configPath = "deploy.yaml"
	}
	return fmt.Sprintf("deploy-web restore --config %s --env %s --capture %s --confirm-env=%s --confirmed-non-production --write-report",
		quoteArg(configPath), env.Name, quoteArg(dir), env.Name)
}

// writeNewFileSynced creates path (it must not exist: a capture's folder
// is new, newCaptureDir) with data, synced to disk.
func writeNewFileSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("deployplan: capture: %w", err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := firstErr(werr, serr, cerr); err != nil {
		return fmt.Errorf("deployplan: capture: write %s: %w", path, err)
	}
	return nil
}
