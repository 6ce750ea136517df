package deployplan

import (
	"context"
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
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/yamlbudget"
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
	c, err := readCapture(dir)
	if err != nil {
		return nil, nil, err
	}
	return c.objs, c.secrets, nil
}

// capture is a capture folder as read: its objects, the file each came
// from, the Secrets its index names, its index and its digest
// (captureDigest over the files read).
type capture struct {
	objs    []*unstructured.Unstructured
	from    map[*unstructured.Unstructured]string
	secrets []string
	index   []captureEntry
	digest  string
}

// readCapture is ReadCapture, with the index. Every name (objects and
// index entries) must be a DNS-1123 subdomain and every namespace a
// DNS-1123 label: a name with control characters or other bytes the API
// server would refuse is a tampered capture.
func readCapture(dir string) (*capture, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("deployplan: capture %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("deployplan: capture %s is not a folder", dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("deployplan: capture %s: %w", dir, err)
	}
	entries, err := f.ReadDir(MaxCaptureFiles + 1)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("deployplan: capture %s: %w", dir, err)
	}
	if len(entries) > MaxCaptureFiles {
		return nil, fmt.Errorf("deployplan: capture %s has more than %d entries: not a capture", dir, MaxCaptureFiles)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var objs []*unstructured.Unstructured
	var secrets []string
	var index []captureEntry
	var files []captureFile
	from := map[*unstructured.Unstructured]string{}
	total := int64(0)
	for _, e := range entries {
		name := e.Name()
		ext := strings.ToLower(filepath.Ext(name))
		isObj := ext == ".json" || ext == ".yaml" || ext == ".yml"
		if !isObj && name != CaptureIndexFile {
			continue // kubectl ignores them too (RESTORE.txt, subfolders)
		}
		if e.Type()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("deployplan: capture %s: %s is a symbolic link: symlinks are not followed in a capture", dir, name)
		}
		if e.IsDir() {
			continue
		}
		if !e.Type().IsRegular() {
			// A FIFO, socket or device: opening a FIFO blocks until a
			// writer comes, so it is refused before any open.
			return nil, fmt.Errorf("deployplan: capture %s: %s is not a regular file", dir, name)
		}
		data, err := readCaptureFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		total += int64(len(data))
		if total > MaxCaptureBytes {
			return nil, fmt.Errorf("deployplan: capture %s holds more than %d bytes: not a capture", dir, MaxCaptureBytes)
		}
		files = append(files, captureFile{name: name, data: data})
		if name == CaptureIndexFile {
			index, err = parseCaptureIndex(data)
			if err != nil {
				return nil, fmt.Errorf("deployplan: capture %s: %w", dir, err)
			}
			secrets = captureSecrets(index)
			continue
		}
		// The decoder expands aliases: a few hundred bytes of nested
		// ones would take gigabytes before any check of the capture.
		if _, err := yamlbudget.Check(name, data, yamlbudget.Budget{MaxBytes: MaxCaptureFileBytes}); err != nil {
			return nil, tooComplex(filepath.Join(dir, name), err)
		}
		got, err := decodeCaptureFile(name, data, MaxCaptureFiles-len(objs))
		if err != nil {
			return nil, fmt.Errorf("deployplan: capture %s: %w", dir, err)
		}
		for _, o := range got {
			from[o] = name
		}
		objs = append(objs, got...)
		if len(objs) > MaxCaptureFiles {
			return nil, fmt.Errorf("deployplan: capture %s holds more than %d objects: not a capture", dir, MaxCaptureFiles)
		}
	}
	return &capture{objs: objs, from: from, secrets: secrets, index: index, digest: captureDigest(files)}, nil
}

// readCaptureFile reads one regular file, never through a symbolic link
// and never waiting on a FIFO, at most MaxCaptureFileBytes.
func readCaptureFile(path string) ([]byte, error) {
	// O_NONBLOCK: should a FIFO replace the file after the folder was
	// listed, the open does not wait for a writer (a regular file ignores
	// the flag); the mode check below then refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
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

// errTooManyObjects: the capture holds more objects than MaxCaptureFiles.
var errTooManyObjects = fmt.Errorf("more than %d objects: not a capture", MaxCaptureFiles)

// decodeCaptureFile decodes every document of one file into objects, at
// most max of them: the cap is checked as each document is decoded, so a
// file of many tiny documents stops at the cap.
func decodeCaptureFile(name string, data []byte, max int) ([]*unstructured.Unstructured, error) {
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
		if len(out) >= max {
			return nil, fmt.Errorf("%s: %w", name, errTooManyObjects)
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
		if err := validCaptureName(u.GetKind(), u.GetNamespace(), u.GetName()); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
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

// parseCaptureIndex reads the index (JSON Lines, blank lines skipped):
// every line must be an entry with a kind and a valid name and namespace.
func parseCaptureIndex(data []byte) ([]captureEntry, error) {
	var out []captureEntry
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var e captureEntry
		if err := unmarshalCaptureEntry(line, i+1, &e); err != nil {
			return nil, fmt.Errorf("%s line %d: not an index entry: %v", CaptureIndexFile, i+1, err)
		}
		if e.Kind == "" {
			return nil, fmt.Errorf("%s line %d: an entry without kind", CaptureIndexFile, i+1)
		}
		if err := validCaptureName(e.Kind, e.Namespace, e.Name); err != nil {
			return nil, fmt.Errorf("%s line %d: %v", CaptureIndexFile, i+1, err)
		}
		out = append(out, e)
		if len(out) > MaxCaptureFiles {
			return nil, fmt.Errorf("%s has more than %d entries: not a capture", CaptureIndexFile, MaxCaptureFiles)
		}
	}
	return out, nil
}

// validCaptureName checks an object's name (a DNS-1123 subdomain, which
// excludes control characters, spaces and slashes) and its namespace
// (empty or a DNS-1123 label).
func validCaptureName(kind, ns, name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%s %q: not a valid name (%s)", kind, name, strings.Join(errs, "; "))
	}
	if ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("%s %s: namespace %q is not valid (%s)", kind, name, ns, strings.Join(errs, "; "))
		}
	}
	return nil
}

// captureSecrets returns the Secrets the index names as existing (not
// captured).
func captureSecrets(index []captureEntry) []string {
	var out []string
	for _, e := range index {
		if e.Kind == "Secret" && e.Existed {
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
// is read bounded, its digest must be one an apply of the environment
// recorded (CaptureRecordName), every object must be listed by the index,
// inside the namespace, not a reserved name or a Secret, with images that
// run now or that the catalog admits, and is dry-run first (a conflict is
// a blocker); the writes happen under the lock, after a capture of their
// own, with a report. The plan and the run are one decision
// (planRestore): with DryRun it is returned; otherwise a decision with
// any blocker is refused whole, and a ready one applies exactly the
// objects it marks appliable.
func Restore(ctx context.Context, env *envconfig.Environment, opts RestoreOptions) (*Report, error) {
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
	c, err := readCapture(opts.Capture)
	if err != nil {
		return nil, &RefusalError{Reason: err.Error() + "; nothing was touched"}
	}
	ps, err := planRestore(ctx, env, opts, c)
	if err != nil {
		return nil, err
	}
	rep := ps.report
	if opts.DryRun {
		return rep, nil
	}
	if rep.Status() != StatusReady {
		var ids []string
		lead := ""
		for _, b := range rep.DeployApply.RemainingBlockers {
			ids = append(ids, b.ID)
			if b.ID == captureUnrecorded {
				lead = b.Message + "; "
			}
		}
		return rep, &RefusalError{Reason: fmt.Sprintf("%sthe restore is blocked by %d blocker(s) (%s); nothing was touched", lead, len(ids), strings.Join(ids, ", "))}
	}
	ao := ApplyOptions{Options: opts.Options, Request: opts.Request, ReportPath: opts.ReportPath, Timeout: opts.Timeout,
		LockDuration: opts.LockDuration, Holder: opts.Holder, BeforeWrite: opts.BeforeWrite, mode: "restore"}
	ao.setDefaults()
	return ps.lockAndApply(ctx, env, ao)
}

// captureUnrecorded is the id of the blocker of a capture no apply of the
// environment recorded.
const captureUnrecorded = "capture-unrecorded"

// appliable are the actions a restore (like an apply) carries out.
var appliable = map[string]bool{ActionCreate: true, ActionUpdate: true, ActionUnchanged: true, ActionReplace: true}

// planRestore is the one decision of a restore, its dry-run and its run
// alike: the capture checks (captureDigest recorded, captureChecks,
// restoreUIDChecks, WorkloadCheck, restoreImageChecks) and the cluster
// checks of a plan (namespace, boundary, reserved names, dry-run, Jobs)
// over the captured objects, an action per object, and ps.objs, the
// objects a run applies: exactly those whose action is appliable. An
// object it does not apply always comes with a blocker, so a run applies
// all of ps.objs or nothing. No artifact or registry gates: a capture is
// the state the cluster had, not a new artifact.
func planRestore(ctx context.Context, env *envconfig.Environment, opts RestoreOptions, c *capture) (*planState, error) {
	objs, secrets := c.objs, c.secrets
	// Namespaces are normalised before anything is keyed by them: an
	// object or an index entry without one is in the environment's, as
	// kubectl -n would put it (BoundaryCheck does the same later).
	for _, o := range objs {
		if o.GetNamespace() == "" {
			o.SetNamespace(env.Namespace)
		}
	}
	for i := range c.index {
		if c.index[i].Namespace == "" {
			c.index[i].Namespace = env.Namespace
		}
	}
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
	d.Source = SourceInfo{Origin: r.Origin, Objects: len(objs), RenderedDigest: digest, CaptureDigest: c.digest}
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
	entries, bs := captureChecks(inside, c.from, c.index)
	blockers = append(blockers, bs...)
	blockers = append(blockers, WorkloadCheck(inside)...)
	blockers = append(blockers, WaveCheck(inside)...)
	// The Apps' dependencies order the restore as they order an apply,
	// but never refuse it: a capture of one App's sync holds that App
	// alone, and its annotations were the live ones.
	ps.deps = appDepsOf(inside)
	listed := inside[:0:0]
	for _, o := range inside {
		if _, ok := entries[key(o)]; ok {
			listed = append(listed, o)
		}
	}
	inside = listed
	r.Objects = inside

	opts.progress("reach the cluster")
	actions := map[string]string{}
	var unreachable *Blocker
	unrecorded := false
	ps.cl, d.Target.Cluster, unreachable = connectCluster(env, opts.Options)
	if unreachable != nil {
		blockers = append(blockers, *unreachable)
		d.CurrentHealth = NamespaceHealth{Status: "Unknown", Message: "cluster not reachable"}
	} else {
		opts.progress("look up the capture's digest %s in ConfigMap %s/%s", c.digest, env.Namespace, CaptureRecordName)
		bs := captureRecordCheck(ctx, ps.cl, env, abs, c.digest)
		blockers, unrecorded = append(blockers, bs...), len(bs) > 0
		bs, ws := ps.clusterChecks(ctx, env, opts.Options, actions)
		blockers, warnings = append(blockers, bs...), append(warnings, ws...)
		blockers = append(blockers, restoreUIDChecks(env, inside, entries, ps.live, actions)...)
		ps.uids = map[string]string{}
		for _, o := range inside {
			if e := entries[key(o)]; e.UID != "" && !restoreAnyUID(env, o) {
				ps.uids[key(o)] = e.UID
			}
		}
		opts.progress("check the capture's images against the live state and the catalog")
		var cat *Catalog
		if rr, err := Render(ctx, env); err != nil {
			warnings = append(warnings, fmt.Sprintf("the environment's catalog could not be read (%s): only images running now are admitted", shortErr(err)))
		} else {
			cat = rr.Catalog
		}
		blockers = append(blockers, restoreImageChecks(inside, ps.live, cat, actions)...)
		d.CurrentHealth = ps.cl.namespaceHealth(ctx, env.Namespace)
	}
	var final map[string]string
	final, ps.objs, blockers = restoreActions(objs, ps.objs, actions, entries, unrecorded, blockers)
	d.Waves = wavePlans(wavesOf(ps.objs, ps.deps))
	for _, o := range objs {
		a := final[key(o)]
		d.Objects = append(d.Objects, ObjectPlan{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Action: a,
			Changes: ps.changes[key(o)].list, ChangesOmitted: ps.changes[key(o)].omitted})
		if w, ok := WorkloadOf(o); ok {
			d.WorkloadPlan = append(d.WorkloadPlan, WorkloadPlan{Kind: w.Kind, Name: w.Name, Containers: w.Containers, Replicas: w.Replicas, Action: a})
		}
	}
	kinds := map[string]bool{}
	for _, o := range ps.objs {
		kinds[o.GetKind()] = true
	}
	d.ApplyBoundary.WriteScope.Kinds = append(sortedKeys(kinds), "Lease/"+LockName+" (the apply lock)", "ConfigMap/"+CaptureRecordName+" (the capture record)")
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

// restoreActions ends the decision of a restore: the action of every
// object of the capture (blocked when the index does not list it, when it
// is a Secret, or when no apply recorded the capture; unknown when it was
// never planned) and the objects a run applies: the planned ones whose
// action is appliable, nothing else. An object left out without a blocker
// would make a ready restore that restores less than the capture, so it
// gets one (capture-not-appliable).
func restoreActions(objs, planned []*unstructured.Unstructured, actions map[string]string, entries map[string]captureEntry, unrecorded bool, blockers []Blocker) (map[string]string, []*unstructured.Unstructured, []Blocker) {
	final := map[string]string{}
	for _, o := range objs {
		a := actions[key(o)]
		if _, ok := entries[key(o)]; !ok || isSecret(o) || unrecorded {
			a = ActionBlocked // nothing of a capture no apply recorded
		}
		if a == "" {
			a = ActionUnknown
		}
		final[key(o)] = a
	}
	apply := planned[:0:0]
	applied := map[*unstructured.Unstructured]bool{}
	for _, o := range planned {
		if appliable[final[key(o)]] {
			apply = append(apply, o)
			applied[o] = true
		}
	}
	if len(blockers) == 0 {
		for _, o := range objs {
			if a := final[key(o)]; !applied[o] {
				ref := o.GetKind() + "/" + o.GetName()
				blockers = append(blockers, Blocker{ID: "capture-not-appliable:" + ref, Message: fmt.Sprintf("%s (namespace %s) would not be restored (action %s): a restore puts back the whole capture or nothing", ref, o.GetNamespace(), a),
					UnblockHint: "restore from an untouched capture"})
			}
		}
	}
	return final, apply, blockers
}

// captureRecordCheck blocks a capture whose digest no apply of env
// recorded (recordCapture): deploy-web restores only what it captured.
func captureRecordCheck(ctx context.Context, cl *clients, env *envconfig.Environment, dir, digest string) []Blocker {
	rec, err := captureRecorded(ctx, cl.kube, env.Namespace, env.Name, digest)
	if err != nil {
		return []Blocker{{ID: captureUnrecorded, Message: fmt.Sprintf("the capture %s cannot be verified: %s", dir, shortErr(err)),
			UnblockHint: fmt.Sprintf("grant deploy-web get on ConfigMap %s in namespace %s and restore again", CaptureRecordName, env.Namespace)}}
	}
	if rec != nil {
		return nil
	}
	return []Blocker{{ID: captureUnrecorded,
		Message: fmt.Sprintf("capture %s (digest %s) was not written by an apply of environment %s: no apply recorded its digest in ConfigMap %s/%s, so it was made or changed by hand (or is older than the newest %d captures); a restore puts back only what deploy-web captured, and a hand-made capture must go through apply like any other source",
			dir, digest, env.Name, env.Namespace, CaptureRecordName, MaxCaptureRecords),
		UnblockHint: "restore from the untouched pre-apply-<time> folder an apply of this environment wrote, or put the manifests in the environment's source and plan and apply them"}}
}

// restoreKinds are the kinds a restore writes: the ones the engine applies
// and prunes (orphanKinds), by group and kind.
func restoreKinds() map[string]bool {
	out := map[string]bool{}
	for _, gvr := range orphanKinds {
		out[gvr.Group+"/"+kindOf(gvr)] = true
	}
	return out
}

// entryKey is key() of an index entry.
func entryKey(e captureEntry) string {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(e.APIVersion)
	u.SetKind(e.Kind)
	u.SetNamespace(e.Namespace)
	u.SetName(e.Name)
	return key(u)
}

// captureChecks accepts an object of the capture only when exactly one
// index entry lists it (group, kind, namespace and name) as having existed
// before the apply, in the file it came from (from), when its kind is one
// the engine writes (restoreKinds) and when no other file holds the same
// object; and every index entry that names a file must match exactly one
// object of that file. It returns the accepted objects' index entries by
// key, and a blocker per object or entry refused.
func captureChecks(objs []*unstructured.Unstructured, from map[*unstructured.Unstructured]string, index []captureEntry) (map[string]captureEntry, []Blocker) {
	listed := map[string][]captureEntry{}
	for _, e := range index {
		if e.Existed {
			listed[entryKey(e)] = append(listed[entryKey(e)], e)
		}
	}
	kinds := restoreKinds()
	out := map[string]captureEntry{}
	seen := map[string]bool{}
	matched := map[string]int{} // index entry (key and file) -> objects
	var blockers []Blocker
	for _, o := range objs {
		ref := o.GetKind() + "/" + o.GetName()
		es := listed[key(o)]
		gk := o.GroupVersionKind().Group + "/" + o.GetKind()
		switch {
		case len(es) == 0:
			blockers = append(blockers, Blocker{ID: "capture-unlisted:" + ref, Message: fmt.Sprintf("the capture holds %s (namespace %q), which its %s does not list as an object that existed before the apply: this folder was changed by hand", ref, o.GetNamespace(), CaptureIndexFile),
				UnblockHint: "restore from an untouched capture, or remove the file of this object"})
		case len(es) > 1:
			blockers = append(blockers, Blocker{ID: "capture-index:" + ref, Message: fmt.Sprintf("the capture's %s lists %s (namespace %q) %d times: this folder was changed by hand", CaptureIndexFile, ref, o.GetNamespace(), len(es)),
				UnblockHint: "restore from an untouched capture"})
		case es[0].File != from[o]:
			blockers = append(blockers, Blocker{ID: "capture-index:" + ref, Message: fmt.Sprintf("the capture holds %s (namespace %q) in file %s, which its %s names as %q: this folder was changed by hand", ref, o.GetNamespace(), from[o], CaptureIndexFile, es[0].File),
				UnblockHint: "restore from an untouched capture"})
		case !kinds[gk]:
			blockers = append(blockers, Blocker{ID: "capture-kind:" + ref, Message: fmt.Sprintf("the capture holds %s of kind %s (%s), which deploy-web never writes", ref, o.GetKind(), o.GetAPIVersion()),
				UnblockHint: "restore from an untouched capture, or remove the file of this object"})
		case seen[key(o)]:
			blockers = append(blockers, Blocker{ID: "capture-duplicate:" + ref, Message: fmt.Sprintf("the capture holds %s more than once", ref),
				UnblockHint: "restore from an untouched capture"})
		default:
			seen[key(o)] = true
			out[key(o)] = es[0]
		}
		if len(es) == 1 && es[0].File == from[o] {
			matched[key(o)+"@"+from[o]]++
		}
	}
	for _, e := range index {
		ref := e.Kind + "/" + e.Name
		wantsFile := e.Existed && e.Kind != "Secret"
		switch {
		case wantsFile != (e.File != ""):
			blockers = append(blockers, Blocker{ID: "capture-index:" + ref, Message: fmt.Sprintf("the capture's %s lists %s (namespace %q, existed %t) with file %q: an apply writes a file for every object that existed, Secrets excepted, and for nothing else; this folder was changed by hand", CaptureIndexFile, ref, e.Namespace, e.Existed, e.File),
				UnblockHint: "restore from an untouched capture"})
		case e.File != "" && matched[entryKey(e)+"@"+e.File] != 1:
			blockers = append(blockers, Blocker{ID: "capture-index:" + ref, Message: fmt.Sprintf("the capture's %s lists %s (namespace %q) in file %s, which holds it %d times: this folder was changed by hand", CaptureIndexFile, ref, e.Namespace, e.File, matched[entryKey(e)+"@"+e.File]),
				UnblockHint: "restore from an untouched capture"})
		}
	}
	return out, blockers
}

// restoreUIDChecks: an object whose index entry records a uid is restored
// only onto that object, or when it is absent (deleted since). An
// allowlisted template Job is the exception: an apply replaces it (a new
// uid) and a restore replaces it back.
func restoreUIDChecks(env *envconfig.Environment, objs []*unstructured.Unstructured, entries map[string]captureEntry, live map[string]*unstructured.Unstructured, actions map[string]string) []Blocker {
	var blockers []Blocker
	for _, o := range objs {
		e, l := entries[key(o)], live[key(o)]
		if e.UID == "" || restoreAnyUID(env, o) || l == nil || string(l.GetUID()) == e.UID {
			continue
		}
		ref := o.GetKind() + "/" + o.GetName()
		blockers = append(blockers, Blocker{ID: "capture-uid:" + ref, Message: fmt.Sprintf("%s is another object than the one captured (uid %s, the capture's %s): a restore never writes onto an object it did not capture", ref, l.GetUID(), e.UID),
			UnblockHint: "plan an apply from the manifests instead, or delete the object by hand if the captured one must come back"})
		actions[key(o)] = ActionBlocked
	}
	return blockers
}

// restoreAnyUID: an allowlisted template Job may be restored onto another
// uid (an apply replaced it).
func restoreAnyUID(env *envconfig.Environment, o *unstructured.Unstructured) bool {
	return o.GroupVersionKind().Group == "batch" && o.GetKind() == "Job" && env.Allowlisted(o.GetName())
}

// restoreImageChecks admits an image of the capture when the live object
// of any captured workload runs it now (the pre-restore state), or when
// the environment's catalog admits it: its repository is a catalog
// service's, or a thirdParty entry admits it (repository and digest).
// Anything else is a blocker naming the image.
func restoreImageChecks(objs []*unstructured.Unstructured, live map[string]*unstructured.Unstructured, cat *Catalog, actions map[string]string) []Blocker {
	running := map[string]bool{}
	for _, l := range live {
		if w, ok := WorkloadOf(l); ok {
			for _, c := range w.Containers {
				running[c.Image] = true
			}
		}
	}
	var blockers []Blocker
	for _, o := range objs {
		w, ok := WorkloadOf(o)
		if !ok {
			continue
		}
		for _, c := range w.Containers {
			if running[c.Image] {
				continue
			}
			if cat != nil {
				if img, err := ParseImage(c.Image); err == nil {
					if m := cat.match(img); m.svc != nil || m.thirdParty != nil {
						continue
					}
				}
			}
			ref := o.GetKind() + "/" + o.GetName()
			blockers = append(blockers, Blocker{ID: "capture-image:" + ref + "/" + c.Name, Message: fmt.Sprintf("%s container %s: image %q is neither running in the namespace's captured workloads nor admitted by the environment's catalog", ref, c.Name, c.Image),
				UnblockHint: "restore from an untouched capture, or add the image to the catalog"})
			actions[key(o)] = ActionBlocked
		}
	}
	return blockers
}
