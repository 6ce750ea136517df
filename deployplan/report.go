package deployplan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/objrules"

	"github.com/hanzoai/deploy-web/appcr"
)

// Conclusion statuses.
const (
	StatusBlocked = "blocked"
	StatusReady   = "ready"
	StatusApplied = "applied"
	StatusFailed  = "failed"
	// StatusRefused is an apply (or restore) refused before it touched
	// anything; the summary says why.
	StatusRefused = "refused"
)

// Template Job replacement results.
const (
	JobPlanned               = "planned"
	JobReplaced              = "replaced"
	JobNotNeeded             = "not_needed"
	JobNotFound              = "not_found"
	JobBlockedNotSuspended   = "blocked_not_suspended"
	JobBlockedNotAllowlisted = "blocked_not_allowlisted"
	JobFailed                = "failed"
)

// Workload and object actions.
const (
	ActionCreate    = "create"
	ActionUpdate    = "update"
	ActionUnchanged = "unchanged"
	ActionReplace   = "replace"
	ActionBlocked   = "blocked"
	ActionUnknown   = "unknown"
)

// SchemaVersion is the version of the report contract.
const SchemaVersion = 1

// FieldManager is the server-side apply field manager of every write
// (appcr.FieldManager).
const FieldManager = appcr.FieldManager

// Report is the plan/apply report. Its JSON form is the contract checked by
// ValidateReport; everything lives under the key "deployApply".
type Report struct {
	DeployApply DeployApply `json:"deployApply"`
}

// DeployApply is the body of a report.
type DeployApply struct {
	SchemaVersion int       `json:"schemaVersion"`
	Environment   string    `json:"environment"`
	Mode          string    `json:"mode"` // "dry-run" or "apply"
	GeneratedAt   time.Time `json:"generatedAt"`

	Conclusion                   Conclusion       `json:"conclusion"`
	ApplyBoundary                ApplyBoundary    `json:"applyBoundary"`
	ArtifactPlan                 ArtifactPlan     `json:"artifactPlan"`
	Target                       Target           `json:"target"`
	WorkloadPlan                 []WorkloadPlan   `json:"workloadPlan"`
	ServicePlan                  []ServicePlan    `json:"servicePlan"`
	TemplateJobReplacementPolicy JobPolicy        `json:"templateJobReplacementPolicy"`
	TemplateJobReplacements      []JobReplacement `json:"templateJobReplacements"`
	ManualCommands               []string         `json:"manualCommands"`
	RollbackHint                 RollbackHint     `json:"rollbackHint"`
	RemainingBlockers            []Blocker        `json:"remainingBlockers"`

	// Beyond the contract's required keys.
	Source        SourceInfo          `json:"source"`
	Objects       []ObjectPlan        `json:"objects"`
	CurrentHealth NamespaceHealth     `json:"currentHealth"`
	HealthChecks  []HealthCheckResult `json:"healthChecks"`
	Warnings      []string            `json:"warnings"`
	// Orphans are objects an earlier apply wrote that the render no longer
	// holds (orphans.go); an apply with prune records each one's result.
	Orphans []Orphan `json:"orphans"`
	// Waves are the apply's waves in order (waves.go): each one's objects
	// and the workloads that must be healthy before the next starts; an
	// apply records each one's result.
	Waves []WavePlan `json:"waves"`
}

// Conclusion is the verdict: blocked or ready for a plan, applied or failed
// after an apply.
type Conclusion struct {
	Status  string `json:"status"`
	Summary string `json:"summary"`
}

// ApplyBoundary states what an apply may and may not do.
type ApplyBoundary struct {
	DefaultMode        string     `json:"defaultMode"`
	RequiredApplyFlags []string   `json:"requiredApplyFlags"`
	WriteScope         WriteScope `json:"writeScope"`
	NoWriteScope       []string   `json:"noWriteScope"`
	ForbiddenActions   []string   `json:"forbiddenActions"`
}

// WriteScope is the namespace and the kinds an apply writes.
type WriteScope struct {
	Namespace string   `json:"namespace"`
	Kinds     []string `json:"kinds"`
}

// ArtifactPlan relates the commits and the artifacts.
type ArtifactPlan struct {
	// ExpectedArtifactCommit is the commit every image tag must name: the
	// catalog commit unless an expected commit was given.
	ExpectedArtifactCommit string `json:"expectedArtifactCommit"`
	// SourceCommit is the manifest repository's commit that was rendered.
	SourceCommit string `json:"sourceCommit"`
	// DeployCommit is the commit the rendered workload images are tagged
	// with ("mixed" when they disagree, "" without workloads).
	DeployCommit string `json:"deployCommit"`
	// CatalogCommit is the catalog's commit field ("" in version mode
	// without one).
	CatalogCommit string `json:"catalogCommit"`
	// CatalogMode is the catalog's mode: "commit" or "version".
	CatalogMode string `json:"catalogMode,omitempty"`
	// PublishStatus: published, unpublished or none (no image in use).
	PublishStatus string `json:"publishStatus"`
	// RegistryStatus: verified, missing, unreachable, not-checked.
	RegistryStatus      string            `json:"registryStatus"`
	UnpublishedServices []string          `json:"unpublishedServices"`
	Services            []ArtifactService `json:"services"`
}

// ArtifactService is one catalog service as used by the plan.
type ArtifactService struct {
	ID    string `json:"id"`
	Image string `json:"image"`
	// Tag is the service's version (version mode) or a third-party
	// image's tag.
	Tag       string `json:"tag,omitempty"`
	Digest    string `json:"digest"`
	Published bool   `json:"published"`
	InUse     bool   `json:"inUse"`
	// ThirdParty marks an image admitted by the catalog's thirdParty list
	// (its id is the repository and tag).
	ThirdParty bool `json:"thirdParty,omitempty"`
	// Registry: present, missing, unreachable, not-checked.
	Registry string `json:"registry"`
}

// Target is where the plan applies.
type Target struct {
	Cluster   string `json:"cluster"`
	Context   string `json:"context"`
	Namespace string `json:"namespace"`
	Protected bool   `json:"protected"`
}

// WorkloadPlan is what happens to one workload.
type WorkloadPlan struct {
	Kind       string      `json:"kind"`
	Name       string      `json:"name"`
	Containers []Container `json:"containers"`
	Replicas   *int64      `json:"replicas"`
	Action     string      `json:"action"`
}

// ServicePlan is one rendered Service.
type ServicePlan struct {
	Name      string        `json:"name"`
	ServiceID string        `json:"serviceId"`
	Ports     []ServicePort `json:"ports"`
}

// ServicePort is a port of a Service.
type ServicePort struct {
	Name string `json:"name"`
	Port int64  `json:"port"`
	// TargetPort is a number, or a string for a named port.
	TargetPort TargetPort `json:"targetPort"`
	Protocol   string     `json:"protocol"`
}

// JobPolicy is the template Job replacement policy.
type JobPolicy struct {
	Allowlist []string `json:"allowlist"`
	Namespace string   `json:"namespace"`
	Rules     []string `json:"rules"`
}

// JobReplacement is the decision (and, after apply, the outcome) for one
// rendered Job.
type JobReplacement struct {
	Namespace   string `json:"namespace"`
	Job         string `json:"job"`
	OldImage    string `json:"oldImage"`
	NewImage    string `json:"newImage"`
	Result      string `json:"result"`
	Reason      string `json:"reason"`
	Allowlisted bool   `json:"allowlisted"`
	Suspended   bool   `json:"suspended"`
	OldUID      string `json:"oldUid,omitempty"`
	NewUID      string `json:"newUid,omitempty"`
}

// RollbackHint says how to undo an apply.
type RollbackHint struct {
	PreApplyCapture string `json:"preApplyCapture"`
	// PreApplyCaptureDigest is the capture's digest ("sha256:<hex>"),
	// recorded in the cluster (ConfigMap CaptureRecordName) before the
	// apply's first change: what a restore of the capture checks.
	PreApplyCaptureDigest    string   `json:"preApplyCaptureDigest,omitempty"`
	DeploymentRollbacks      []string `json:"deploymentRollbacks"`
	SuspendedJobCleanup      []string `json:"suspendedJobCleanup"`
	PostRollbackHealthChecks []string `json:"postRollbackHealthChecks"`
}

// Blocker is a reason the plan cannot be applied, with how to fix it.
type Blocker struct {
	ID          string `json:"id"`
	Message     string `json:"message"`
	UnblockHint string `json:"unblockHint"`
	// Affected names every object, container or catalog entry with this
	// problem (one blocker per root cause): "Deployment/api/api",
	// "catalog/api", "Job/db-migrate".
	Affected []string `json:"affected,omitempty"`
}

// SourceInfo says what was rendered.
type SourceInfo struct {
	Origin      string `json:"origin"`
	Commit      string `json:"commit"`
	CatalogPath string `json:"catalogPath"`
	Objects     int    `json:"objects"`
	// RenderedDigest is "sha256:<hex>" of the rendered objects (RenderedDigest):
	// with Commit, what an apply of this plan checks has not moved.
	RenderedDigest string `json:"renderedDigest"`
	// Only names the objects a narrowed plan covers (Options.Only); ""
	// for the whole render. Objects and RenderedDigest count those alone,
	// and an apply of the plan must be narrowed the same way.
	Only string `json:"only,omitempty"`
	// CaptureDigest is, in a restore's report, the digest of the capture
	// restored (captureDigest): the one its apply recorded.
	CaptureDigest string `json:"captureDigest,omitempty"`
	// Charts are the Helm charts the render rendered, in render order.
	Charts []ChartInfo `json:"charts,omitempty"`
}

// ChartInfo is one Helm chart a render rendered: which chart, at which
// version, as which release, with which values, for which Kubernetes.
type ChartInfo struct {
	// Path is the chart's folder in the repository ("charts/podinfo").
	Path string `json:"path"`
	// Name and Version are Chart.yaml's.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Release is .Release.Name; Via is "source.helm" or the
	// kustomization whose helmCharts entry rendered it.
	Release string `json:"release"`
	Via     string `json:"via"`
	// ValuesFiles are the values files applied over the chart's
	// values.yaml, in order, relative to the repository.
	ValuesFiles []string `json:"valuesFiles,omitempty"`
	// KubeVersion is the Kubernetes version it was rendered for.
	KubeVersion string `json:"kubeVersion"`
	// Objects counts the objects it rendered (hooks included, chart
	// tests and other left-out hooks not).
	Objects int `json:"objects"`
}

// ObjectPlan is one rendered object: the planned action and, after an
// apply, its result. Secrets appear by kind and name only.
type ObjectPlan struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Action     string `json:"action"`
	Result     string `json:"result,omitempty"`
	Message    string `json:"message,omitempty"`
	Health     string `json:"health,omitempty"`
	// Hook is the object's helm.sh/hook annotation when it is a Helm
	// hook: a pre-install/pre-upgrade hook applies before the other
	// objects, a post- hook after them.
	Hook string `json:"hook,omitempty"`
	// Drift lists, for a live object, the fields that managers other than
	// deploy-web changed and deploy-web does not own (kubectl edit, scale,
	// set, annotate, another tool's apply); absent when there are none.
	Drift []objrules.DriftField `json:"drift,omitempty"`
	// Changes lists, for an update, each changed field with its live value
	// and the value after the apply (Changes: the same comparison as the
	// action; a Secret's values by hash only); at most MaxChanges, and
	// ChangesOmitted counts the rest.
	Changes        []Change `json:"changes,omitempty"`
	ChangesOmitted int      `json:"changesOmitted,omitempty"`
}

// NamespaceHealth is the health of the namespace's workloads.
type NamespaceHealth struct {
	Status    string           `json:"status"`
	Message   string           `json:"message"`
	Workloads []WorkloadHealth `json:"workloads"`
}

// WorkloadHealth is one workload's health (HEALTH.md).
type WorkloadHealth struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// HealthCheckResult is the outcome of one configured HTTP check.
type HealthCheckResult struct {
	Name     string `json:"name"`
	URL      string `json:"url"`
	Required bool   `json:"required"`
	OK       bool   `json:"ok"`
	Message  string `json:"message"`
}

// normalize makes every list non-nil (the contract wants arrays, not null)
// and sorts blockers and warnings for stable output.
func (d *DeployApply) normalize() {
	ne := func(s *[]string) {
		if *s == nil {
			*s = []string{}
		}
	}
	ne(&d.ApplyBoundary.RequiredApplyFlags)
	ne(&d.ApplyBoundary.WriteScope.Kinds)
	ne(&d.ApplyBoundary.NoWriteScope)
	ne(&d.ApplyBoundary.ForbiddenActions)
	ne(&d.ArtifactPlan.UnpublishedServices)
	ne(&d.TemplateJobReplacementPolicy.Allowlist)
	ne(&d.TemplateJobReplacementPolicy.Rules)
	ne(&d.ManualCommands)
	ne(&d.RollbackHint.DeploymentRollbacks)
	ne(&d.RollbackHint.SuspendedJobCleanup)
	ne(&d.RollbackHint.PostRollbackHealthChecks)
	ne(&d.Warnings)
	if d.ArtifactPlan.Services == nil {
		d.ArtifactPlan.Services = []ArtifactService{}
	}
	if d.WorkloadPlan == nil {
		d.WorkloadPlan = []WorkloadPlan{}
	}
	for i := range d.WorkloadPlan {
		if d.WorkloadPlan[i].Containers == nil {
			d.WorkloadPlan[i].Containers = []Container{}
		}
	}
	if d.ServicePlan == nil {
		d.ServicePlan = []ServicePlan{}
	}
	for i := range d.ServicePlan {
		if d.ServicePlan[i].Ports == nil {
			d.ServicePlan[i].Ports = []ServicePort{}
		}
	}
	if d.TemplateJobReplacements == nil {
		d.TemplateJobReplacements = []JobReplacement{}
	}
	if d.RemainingBlockers == nil {
		d.RemainingBlockers = []Blocker{}
	}
	if d.Objects == nil {
		d.Objects = []ObjectPlan{}
	}
	if d.CurrentHealth.Workloads == nil {
		d.CurrentHealth.Workloads = []WorkloadHealth{}
	}
	if d.HealthChecks == nil {
		d.HealthChecks = []HealthCheckResult{}
	}
	if d.Orphans == nil {
		d.Orphans = []Orphan{}
	}
	if d.Waves == nil {
		d.Waves = []WavePlan{}
	}
	for i := range d.Waves {
		if d.Waves[i].Objects == nil {
			d.Waves[i].Objects = []string{}
		}
		if d.Waves[i].Workloads == nil {
			d.Waves[i].Workloads = []string{}
		}
	}
	d.RemainingBlockers = dedupeBlockers(d.RemainingBlockers)
}

// dedupeBlockers makes one blocker per root cause (groupBlockers), sorted
// by id.
func dedupeBlockers(bs []Blocker) []Blocker { return groupBlockers(bs) }

// Status is the conclusion's status.
func (r *Report) Status() string { return r.DeployApply.Conclusion.Status }

// JSON returns the indented JSON form of the report.
func (r *Report) JSON() ([]byte, error) {
	r.DeployApply.normalize()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("deployplan: encode report: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteFile writes the JSON report atomically (a temporary file renamed
// over path, synced), so a crash never leaves half a report, into a
// folder of this user's (PrepareReportsDir).
func (r *Report) WriteFile(path string) error {
	b, err := r.JSON()
	if err != nil {
		return err
	}
	if err := PrepareReportsDir(filepath.Dir(path)); err != nil {
		return err
	}
	return writeFileAtomic(path, b)
}

func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("deployplan: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("deployplan: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := firstErr(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("deployplan: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("deployplan: write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// DefaultReportPath is reports/<env>/deploy-report.json.
func DefaultReportPath(env string) string {
	return filepath.Join("reports", env, "deploy-report.json")
}

// Summary is the short terminal form of the report.
func (r *Report) Summary() string {
	d := &r.DeployApply
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", strings.ToUpper(d.Conclusion.Status), d.Conclusion.Summary)
	fmt.Fprintf(&b, "  environment %s, namespace %s, cluster %s\n", d.Environment, d.Target.Namespace, textfmt.OrDash(d.Target.Cluster))
	fmt.Fprintf(&b, "  source %s at %s; catalog commit %s\n", textfmt.OrDash(d.Source.Origin), textfmt.ShortSHA(d.ArtifactPlan.SourceCommit), textfmt.ShortSHA(d.ArtifactPlan.CatalogCommit))
	counts := map[string]int{}
	for _, o := range d.Objects {
		k := o.Action
		if o.Result != "" {
			k = o.Result
		}
		counts[k]++
	}
	var parts []string
	for _, k := range sortedKeys(counts) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	fmt.Fprintf(&b, "  objects: %d (%s)", len(d.Objects), strings.Join(parts, ", "))
	if n := len(d.Orphans); n > 0 {
		fmt.Fprintf(&b, "; orphans: %d", n)
	}
	b.WriteString("\n")
	for _, line := range waveLines(d.Waves) {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	for _, line := range changeLines(d.Objects, summaryChanges) {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	for _, j := range d.TemplateJobReplacements {
		if j.Result == JobNotNeeded || j.Result == JobNotFound {
			continue
		}
		fmt.Fprintf(&b, "  job %s: %s (%s -> %s)\n", j.Job, j.Result, textfmt.OrDash(j.OldImage), textfmt.OrDash(j.NewImage))
	}
	for _, bl := range d.RemainingBlockers {
		fmt.Fprintf(&b, "  BLOCKER %s: %s\n    fix: %s\n", bl.ID, bl.Message, bl.UnblockHint)
		if len(bl.Affected) > 1 {
			fmt.Fprintf(&b, "    affected (%d): %s\n", len(bl.Affected), affectedList(bl.Affected, 10))
		}
	}
	for _, line := range driftLines(d.Objects) {
		fmt.Fprintf(&b, "  drift %s\n", line)
	}
	for _, o := range d.Orphans {
		if o.Result != "" {
			fmt.Fprintf(&b, "  orphan %s/%s: %s %s\n", o.Kind, o.Name, o.Result, o.Message)
			continue
		}
		fmt.Fprintf(&b, "  ORPHAN %s/%s: %s\n", o.Kind, o.Name, o.Hint)
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", w)
	}
	if d.RollbackHint.PreApplyCapture != "" && d.Mode == "apply" {
		fmt.Fprintf(&b, "  pre-apply capture: %s\n", d.RollbackHint.PreApplyCapture)
	}
	for _, c := range d.ManualCommands {
		fmt.Fprintf(&b, "  next: %s\n", c)
	}
	return b.String()
}

// summaryChanges is the most changes per object the terminal summary
// shows; the JSON report keeps up to MaxChanges.
const summaryChanges = 8

// changeLines are the objects' changes for the terminal: a line per
// object that changes, then a line per field, "path: old -> new" ("–"
// for an absent value), at most max per object.
func changeLines(objs []ObjectPlan, max int) []string {
	var out []string
	for _, o := range objs {
		if len(o.Changes) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s/%s:", o.Action, o.Kind, o.Name))
		for i, c := range o.Changes {
			if i == max {
				break
			}
			out = append(out, fmt.Sprintf("  %s: %s -> %s", c.Path, textfmt.OrDash(c.Old), textfmt.OrDash(c.New)))
		}
		if more := len(o.Changes) - min(len(o.Changes), max) + o.ChangesOmitted; more > 0 {
			out = append(out, fmt.Sprintf("  (%d more changed field(s); the JSON report lists up to %d)", more, MaxChanges))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
