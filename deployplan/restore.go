package deployplan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Limits on a capture folder read by Restore: it may have been tampered
// with, so it is read like a manifest repository, bounded.
const (
	MaxCaptureFiles     = 2000     // entries of the folder
	MaxCaptureFileBytes = 4 << 20  // one file
	MaxCaptureBytes     = 64 << 20 // every file read
)

// RestoreOptions tune a restore.
type RestoreOptions struct {
	Options
	// Request carries the confirmations (as for an apply).
	Request ApplyRequest
	// Capture is the pre-apply capture folder to re-apply.
	Capture string
	// DryRun plans the restore only: nothing is written.
	DryRun bool
	// ReportPath is where the report goes; its folder also receives the
	// capture taken before the restore. "" means
	// reports/<env>/restore-report.json.
	ReportPath string
	// Timeout, LockDuration, Holder and BeforeWrite are as for Apply.
	Timeout      time.Duration
	LockDuration time.Duration
	Holder       string
	BeforeWrite  func(ctx context.Context, what string)
}

// ReadCapture reads a capture folder as kubectl apply -f DIR would see it
// (the .json, .yaml and .yml files directly inside it, each one or more
// objects), bounded by the Max* limits, refusing symbolic links and
// anything that is not a regular file, a list kind or an object without
// apiVersion, kind or name. It also returns the Secrets the index names
// as not captured (to restore by hand).
func ReadCapture(dir string) ([]*unstructured.Unstructured, []string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("deployplan: capture %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("deployplan: capture %s is not a folder", dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("deployplan: capture %s: %w", dir, err)
	}
	entries, err := f.ReadDir(MaxCaptureFiles + 1)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("deployplan: capture %s: %w", dir, err)
	}
	if len(entries) > MaxCaptureFiles {
		return nil, nil, fmt.Errorf("deployplan: capture %s has more than %d entries: not a capture", dir, MaxCaptureFiles)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var objs []*unstructured.Unstructured
	var secrets []string
	total := int64(0)
	for _, e := range entries {
		name := e.Name()
		ext := strings.ToLower(filepath.Ext(name))
		isObj := ext == ".json" || ext == ".yaml" || ext == ".yml"
		if !isObj && name != CaptureIndexFile {
			continue // kubectl ignores them too (RESTORE.txt, subfolders)
		}
		if e.Type()&os.ModeSymlink != 0 {
			return nil, nil, fmt.Errorf("deployplan: capture %s: %s is a symbolic link: symlinks are not followed in a capture", dir, name)
		}
		if e.IsDir() {
			continue
		}
		data, err := readCaptureFile(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		total += int64(len(data))
		if total > MaxCaptureBytes {
			return nil, nil, fmt.Errorf("deployplan: capture %s holds more than %d bytes: not a capture", dir, MaxCaptureBytes)
		}
		if name == CaptureIndexFile {
			secrets = captureSecrets(data)
			continue
		}
		got, err := decodeCaptureFile(name, data)
		if err != nil {
			return nil, nil, fmt.Errorf("deployplan: capture %s: %w", dir, err)
		}
		objs = append(objs, got...)
		if len(objs) > MaxCaptureFiles {
			return nil, nil, fmt.Errorf("deployplan: capture %s holds more than %d objects: not a capture", dir, MaxCaptureFiles)
		}
	}
	return objs, secrets, nil
}

// readCaptureFile reads one regular file, never through a symbolic link,
// at most MaxCaptureFileBytes.
func readCaptureFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("deployplan: capture file %s: %w (symlinks are not followed in a capture)", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("deployplan: capture file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("deployplan: capture file %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxCaptureFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("deployplan: capture file %s: %w", path, err)
	}
	if len(data) > MaxCaptureFileBytes {
		return nil, fmt.Errorf("deployplan: capture file %s is larger than %d bytes: not a capture", path, MaxCaptureFileBytes)
	}
	return data, nil
}

// decodeCaptureFile decodes every document of one file into objects.
func decodeCaptureFile(name string, data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: not an object: %v", name, err)
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		switch {
		case u.GetAPIVersion() == "" || u.GetKind() == "":
			return nil, fmt.Errorf("%s: an object without apiVersion or kind", name)
		case strings.HasSuffix(u.GetKind(), "List"):
			return nil, fmt.Errorf("%s: %s: lists are not accepted in a capture", name, u.GetKind())
		case u.GetName() == "" || u.GetGenerateName() != "":
			return nil, fmt.Errorf("%s: %s without a name (or with generateName)", name, u.GetKind())
		}
		// What the server sets is never sent back.
		unstructured.RemoveNestedField(u.Object, "status")
		for _, f := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
			unstructured.RemoveNestedField(u.Object, "metadata", f)
		}
		out = append(out, u)
	}
	return out, nil
}

// captureSecrets returns the Secrets the index names (not captured).
func captureSecrets(index []byte) []string {
	var out []string
	for _, line := range strings.Split(string(index), "\n") {
		var e captureEntry
		if json.Unmarshal([]byte(line), &e) == nil && e.Kind == "Secret" && e.Existed && e.Name != "" && len(e.Name) <= 253 {
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out
}

// DefaultRestoreReportPath is reports/<env>/restore-report.json.
func DefaultRestoreReportPath(env string) string {
	return filepath.Join("reports", env, "restore-report.json")
}

// Restore re-applies a pre-apply capture with the guards of an apply: the
// request is checked (protected environments, confirmations), the capture
// is read bounded, every object must be inside the namespace and not a
// reserved name or a Secret, every object is dry-run first (a conflict is a
// blocker), and the writes happen under the lock, after a capture of their
// own, with a report. With DryRun it returns the plan of the restore.
func Restore(ctx context.Context, env *Environment, opts RestoreOptions) (*Report, error) {
	if !opts.DryRun {
		if err := CheckApplyRequest(env, opts.Request); err != nil {
			return nil, err
		}
	}
	if opts.ReportPath == "" {
		opts.ReportPath = DefaultRestoreReportPath(env.Name)
	}
	opts.Options.ReportPath = opts.ReportPath
	opts.progress("read the capture %s", opts.Capture)
	objs, secrets, err := ReadCapture(opts.Capture)
	if err != nil {
		return nil, &RefusalError{Reason: err.Error() + "; nothing was touched"}
	}
	ps, err := planRestore(ctx, env, opts, objs, secrets)
	if err != nil {
		return nil, err
	}
	rep := ps.report
	if opts.DryRun {
		return rep, nil
	}
	if rep.Status() != StatusReady {
		var ids []string
		for _, b := range rep.DeployApply.RemainingBlockers {
			ids = append(ids, b.ID)
		}
		return rep, &RefusalError{Reason: fmt.Sprintf("the restore is blocked by %d blocker(s) (%s); nothing was touched", len(ids), strings.Join(ids, ", "))}
	}
	ao := ApplyOptions{Options: opts.Options, Request: opts.Request, ReportPath: opts.ReportPath, Timeout: opts.Timeout,
		LockDuration: opts.LockDuration, Holder: opts.Holder, BeforeWrite: opts.BeforeWrite, mode: "restore"}
	if ao.Timeout <= 0 {
		ao.Timeout = 5 * time.Minute
	}
	if ao.LockDuration <= 0 {
		ao.LockDuration = DefaultLockDuration
	}
	if ao.Holder == "" {
		ao.Holder = DefaultHolder()
	}
	ao.Holder = uniqueHolder(ao.Holder)
	return ps.lockAndApply(ctx, env, ao)
}

// planRestore is the plan of a restore: the cluster checks of a plan
// (namespace, boundary, reserved names, dry-run, Jobs) over the captured
// objects; no catalog, artifact or registry gates (a capture is the state
// the cluster had, not a new artifact).
func planRestore(ctx context.Context, env *Environment, opts RestoreOptions, objs []*unstructured.Unstructured, secrets []string) (*planState, error) {
	abs, _ := filepath.Abs(opts.Capture)
	r := &Rendered{Objects: objs, Origin: "capture " + abs, Catalog: &Catalog{}}
	ps := &planState{rendered: r, live: map[string]*unstructured.Unstructured{}, jobs: map[string]JobReplacement{}, report: &Report{}}
	d := &ps.report.DeployApply
	d.SchemaVersion, d.Environment, d.Mode, d.GeneratedAt = SchemaVersion, env.Name, "restore-dry-run", opts.now().UTC()
	d.Target = Target{Context: env.Cluster.Context, Namespace: env.Namespace, Protected: env.Protected}
	if env.Cluster.InCluster {
		d.Target.Context = "(in-cluster)"
	}
	digest, err := RenderedDigest(objs)
	if err != nil {
		return nil, err
	}
	d.Source = SourceInfo{Origin: r.Origin, Objects: len(objs), RenderedDigest: digest}
	d.ApplyBoundary = boundary(env)
	d.ApplyBoundary.RequiredApplyFlags = []string{"--capture", "--confirm-env=" + env.Name, "--confirmed-non-production"}
	d.TemplateJobReplacementPolicy = JobPolicy{Allowlist: append([]string{}, env.TemplateJobs.Allowlist...), Namespace: env.Namespace, Rules: jobRules}
	d.ArtifactPlan = ArtifactPlan{PublishStatus: "none", RegistryStatus: "not-checked"}
	var blockers []Blocker
	var warnings []string
	for _, s := range secrets {
		warnings = append(warnings, fmt.Sprintf("Secret %s was not captured (its values are never read): restore it by hand if the apply changed it", s))
	}
	var inside []*unstructured.Unstructured
	for _, o := range objs {
		if isSecret(o) {
			blockers = append(blockers, Blocker{ID: "capture-secret:" + o.GetName(), Message: fmt.Sprintf("the capture holds Secret %s: a capture never holds Secrets, so this folder was changed by hand", o.GetName()),
				UnblockHint: "remove the Secret's file from the capture and restore the Secret by hand"})
			continue
		}
		inside = append(inside, o)
	}
	r.Objects = inside

	opts.progress("reach the cluster")
	cfg := opts.RestConfig
	if cfg == nil {
		cfg, err = RestConfig(env, opts.Kubeconfig)
	}
	actions := map[string]string{}
	if err == nil {
		d.Target.Cluster = cfg.Host
		ps.cl, err = newClients(cfg)
		if err == nil {
			_, err = ps.cl.disc.ServerVersion()
		}
	}
	if err != nil {
		blockers = append(blockers, Blocker{ID: "cluster-unreachable", Message: fmt.Sprintf("the cluster is not reachable: %v", shortErr(err)),
			UnblockHint: "check the network path and credentials of the environment's kubeconfig context"})
		d.CurrentHealth = NamespaceHealth{Status: "Unknown", Message: "cluster not reachable"}
	} else {
		bs, ws := ps.clusterChecks(ctx, env, opts.Options, actions)
		blockers, warnings = append(blockers, bs...), append(warnings, ws...)
		d.CurrentHealth = ps.cl.namespaceHealth(ctx, env.Namespace)
	}
	for _, o := range objs {
		a := actions[key(o)]
		if a == "" {
			a = ActionUnknown
			if isSecret(o) {
				a = ActionBlocked
			}
		}
		d.Objects = append(d.Objects, ObjectPlan{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Action: a})
		if w, ok := WorkloadOf(o); ok {
			d.WorkloadPlan = append(d.WorkloadPlan, WorkloadPlan{Kind: w.Kind, Name: w.Name, Containers: w.Containers, Replicas: w.Replicas, Action: a})
		}
	}
	kinds := map[string]bool{}
	for _, o := range ps.objs {
		kinds[o.GetKind()] = true
	}
	d.ApplyBoundary.WriteScope.Kinds = append(sortedKeys(kinds), "Lease/"+LockName+" (the apply lock)")
	for _, o := range inside {
		if j, ok := ps.jobs[key(o)]; ok {
			d.TemplateJobReplacements = append(d.TemplateJobReplacements, j)
		}
	}
	d.RemainingBlockers = blockers
	d.Warnings = warnings
	d.normalize()
	Conclude(d)
	if d.Conclusion.Status == StatusReady {
		d.Conclusion.Summary = strings.Replace(d.Conclusion.Summary, "ready:", "restore ready:", 1)
		if env.Protected {
			d.Conclusion.Summary += "; a restore is refused like an apply"
		}
	}
	d.ManualCommands = []string{restoreCommand(env, opts.ConfigPath, opts.Capture)}
	if env.Protected || d.Conclusion.Status != StatusReady {
		d.ManualCommands = []string{}
	}
	d.RollbackHint = rollbackHint(env, d, "", opts.Options)
	return ps, nil
}
