package deployplan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/deployplan/helmrender"
	"github.com/hanzoai/deploy-web/envconfig"
)

// BlockerHelmChart is the id of the blocker of a Helm chart refused
// before anything of it was rendered (ChartError).
const BlockerHelmChart = "helm-chart"

// ChartError is a Helm chart, or a file it needs, refused: a dependency
// not vendored, a symbolic link, a values file outside the repository, a
// file over its budget, a template stopped at a bound. Nothing ran and
// nothing was fetched.
type ChartError struct {
	// Chart is the chart folder, relative to the repository.
	Chart string
	// File is the file at fault, relative to the repository ("" for the
	// chart as a whole).
	File string
	// Reason says what is wrong, Hint what to do.
	Reason, Hint string
}

func (e *ChartError) Error() string { return "deployplan: " + e.Public() }

// Public is the refusal in words a user may read: the chart, the file and
// the reason (the repository's own names).
func (e *ChartError) Public() string {
	where := e.Chart
	if e.File != "" {
		where = e.File
	}
	if e.Hint == "" {
		return fmt.Sprintf("Helm chart %s: %s: %s", e.Chart, where, e.Reason)
	}
	return fmt.Sprintf("Helm chart %s: %s: %s: %s", e.Chart, where, e.Reason, e.Hint)
}

// Blocker is the error as the plan's blocker.
func (e *ChartError) Blocker() Blocker {
	affected := e.File
	if affected == "" {
		affected = e.Chart
	}
	return Blocker{ID: BlockerHelmChart, Message: affected + ": " + e.Reason, Affected: []string{affected},
		UnblockHint: "fix the chart in the repository (nothing of it was rendered): " + e.Hint}
}

// Reasons of a refused helmCharts entry.
const (
	reasonHelmRepo = "charts are never downloaded (no helm binary, no chart repository, no OCI registry): vendor the chart into the repository under helmGlobals.chartHome (`helm pull REPO/NAME --version V --untar --untardir CHARTHOME` on a workstation) and drop repo:"
	reasonHelmName = "nameTemplate is not supported: set releaseName"
	reasonHelmGen  = "helmChartInflationGenerator is not supported (it is deprecated): use helmCharts with the chart vendored under helmGlobals.chartHome"
	reasonNoName   = "name is required (the chart's folder under helmGlobals.chartHome)"
	// defaultChartHome and defaultReleaseName are kustomize's defaults.
	defaultChartHome   = "charts"
	defaultReleaseName = "release-name"
	// defaultReleaseNamespace is .Release.Namespace of a helmCharts entry
	// without namespace: what `helm template` without --namespace gives.
	defaultReleaseNamespace = "default"
)

// helmUse is a kustomization with helmCharts entries, checked.
type helmUse struct {
	kf, dir string
	k       types.Kustomization
	// chartDirs are the in-memory chart folders, by entry.
	chartDirs []string
}

// renderSeam is what a render needs besides the repository's files: the
// environment (a chart folder, its namespace, the configured Kubernetes
// version) and the cluster to ask which version charts render for.
// Warnings collects what the charts' renders tell.
type renderSeam struct {
	env *envconfig.Environment
	// cluster asks the target cluster's discovery; nil, or ok false,
	// when there is no cluster to ask.
	cluster func(context.Context) (helmrender.Capabilities, bool)

	asked    bool
	found    helmrender.Capabilities
	foundOK  bool
	warnings []string
	charts   []ChartInfo
}

// capabilities are what a chart is rendered for: the entry's own
// kubeVersion (a helmCharts entry), else the cluster's, else the
// environment's source.kubeVersion, else helmrender.DefaultKubeVersion;
// apiVersions are the entry's and the cluster's.
func (rs *renderSeam) capabilities(ctx context.Context, chart, kubeVersion string, apiVersions []string) helmrender.Capabilities {
	if !rs.asked && rs.cluster != nil {
		rs.asked = true
		rs.found, rs.foundOK = rs.cluster(ctx)
	}
	caps := helmrender.Capabilities{KubeVersion: kubeVersion, APIVersions: append([]string{}, apiVersions...)}
	if rs.foundOK {
		caps.APIVersions = append(caps.APIVersions, rs.found.APIVersions...)
	}
	switch {
	case caps.KubeVersion != "":
	case rs.foundOK && rs.found.KubeVersion != "":
		caps.KubeVersion = rs.found.KubeVersion
	case rs.env != nil && rs.env.Source.KubeVersion != "":
		caps.KubeVersion = rs.env.Source.KubeVersion
	case rs.foundOK:
		caps.KubeVersion = helmrender.DefaultKubeVersion
		rs.warnings = append(rs.warnings, fmt.Sprintf("Helm chart %s is rendered for Kubernetes %s: the cluster reports no release version (v0.0.0: a development build) and source.kubeVersion is not set", chart, caps.KubeVersion))
	default:
		caps.KubeVersion = helmrender.DefaultKubeVersion
		rs.warnings = append(rs.warnings, fmt.Sprintf("Helm chart %s is rendered for Kubernetes %s: no cluster answered and source.kubeVersion is not set", chart, caps.KubeVersion))
	}
	return caps
}

// render renders dir: a chart folder when the environment has
// source.helm, else a kustomization whose helmCharts are rendered first.
func (rs *renderSeam) render(ctx context.Context, rfs *repoFS, dir string) ([]*unstructured.Unstructured, error) {
	if rs.env != nil && rs.env.Source.Helm != nil {
		return rs.renderChart(ctx, rfs, dir)
	}
	uses, err := checkKustomizations(rfs, dir)
	if err != nil {
		if ferr := rfs.fs.failed(); ferr != nil {
			return nil, ferr
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("deployplan: render: %w", err)
	}
	for _, u := range uses {
		if err := rs.inflate(ctx, rfs, u); err != nil {
			return nil, err
		}
	}
	objs, err := kustomize(rfs.fs, dir)
	if err != nil {
		if ferr := rfs.fs.failed(); ferr != nil {
			return nil, ferr
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("deployplan: render abandoned: %w", cerr)
		}
	}
	return objs, err
}

// renderChart renders the environment's chart folder dir with
// source.helm; every object without a namespace goes to the
// environment's (helm install -n NAMESPACE).
func (rs *renderSeam) renderChart(ctx context.Context, rfs *repoFS, dir string) ([]*unstructured.Unstructured, error) {
	h := rs.env.Source.Helm
	files, err := chartFiles(rfs, dir)
	if err != nil {
		return nil, err
	}
	vfs, err := valuesFiles(rfs, relRepo(dir), dir, h.ValueFiles)
	if err != nil {
		return nil, err
	}
	res, err := helmrender.Render(ctx, helmrender.Request{Chart: relRepo(dir), Files: files, ReleaseName: h.ReleaseName, Namespace: rs.env.Namespace,
		ValuesFiles: vfs, Values: h.Values, Capabilities: rs.capabilities(ctx, relRepo(dir), "", nil)})
	if err != nil {
		return nil, chartError(relRepo(dir), vfs, err)
	}
	rs.warnings = append(rs.warnings, res.Warnings...)
	rs.charts = append(rs.charts, chartInfo(relRepo(dir), "source.helm", h.ReleaseName, vfs, res, len(res.Objects)))
	for _, o := range res.Objects {
		if o.GetNamespace() == "" {
			o.SetNamespace(rs.env.Namespace)
		}
	}
	return res.Objects, nil
}

// inflate renders the helmCharts entries of one kustomization and feeds
// the objects back to it as resources: each chart's output becomes a file
// beside the kustomization, listed in its resources instead of the
// entry, so the rest of the kustomization (namespace, namePrefix, labels,
// images, patches) transforms it as kustomize's own Helm support would.
func (rs *renderSeam) inflate(ctx context.Context, rfs *repoFS, u helmUse) error {
	k := u.k
	var generated []string
	for i, hc := range k.HelmCharts {
		cdir := u.chartDirs[i]
		files, err := chartFiles(rfs, cdir)
		if err != nil {
			return err
		}
		vfs, err := valuesFiles(rfs, relRepo(u.kf), u.dir, entryValuesFiles(hc))
		if err != nil {
			return err
		}
		release := cmpOr(hc.ReleaseName, defaultReleaseName)
		res, err := helmrender.Render(ctx, helmrender.Request{Chart: relRepo(cdir), Files: files, ReleaseName: release,
			Namespace: cmpOr(hc.Namespace, defaultReleaseNamespace), ValuesFiles: vfs, Values: hc.ValuesInline, IncludeCRDs: hc.IncludeCRDs,
			Capabilities: rs.capabilities(ctx, relRepo(cdir), hc.KubeVersion, hc.ApiVersions)})
		if err != nil {
			return chartError(relRepo(cdir), vfs, err)
		}
		if hc.Version != "" && res.ChartVersion != hc.Version {
			return &KustomizationError{File: relRepo(u.kf), Field: "helmCharts", Entry: hc.Name,
				Reason: fmt.Sprintf("version %s is asked for; %s holds version %s: vendor that version or fix the entry", hc.Version, relRepo(cdir), res.ChartVersion)}
		}
		rs.warnings = append(rs.warnings, res.Warnings...)
		var buf bytes.Buffer
		kept := 0
		for _, o := range res.Objects {
			if hc.SkipHooks && helmrender.HookPhase(o) != helmrender.PhaseMain {
				continue
			}
			kept++
			b, err := yaml.Marshal(o.Object)
			if err != nil {
				return fmt.Errorf("deployplan: Helm chart %s: %w", relRepo(cdir), err)
			}
			buf.WriteString("---\n")
			buf.Write(b)
		}
		rs.charts = append(rs.charts, chartInfo(relRepo(cdir), relRepo(u.kf), release, vfs, res, kept))
		name := generatedName(rfs, u.dir, i, hc.Name)
		if err := rfs.fs.FileSystem.WriteFile(path.Join(u.dir, name), buf.Bytes()); err != nil {
			return err
		}
		generated = append(generated, name)
	}
	k.HelmCharts, k.HelmGlobals = nil, nil
	k.Resources = append(k.Resources, generated...)
	b, err := yaml.Marshal(&k)
	if err != nil {
		return fmt.Errorf("deployplan: %s: %w", relRepo(u.kf), err)
	}
	return rfs.fs.FileSystem.WriteFile(u.kf, b)
}

// generatedName is a file name beside a kustomization that the
// repository does not hold, for the output of its i-th chart.
func generatedName(rfs *repoFS, dir string, i int, chart string) string {
	base := fmt.Sprintf("helm-chart-%d-%s.deploy-web", i, strings.ReplaceAll(chart, "/", "-"))
	name := base + ".yaml"
	for n := 2; rfs.fs.Exists(path.Join(dir, name)); n++ {
		name = base + "-" + strconv.Itoa(n) + ".yaml"
	}
	return name
}

// chartInfo is what a report tells of one rendered chart.
func chartInfo(chart, via, release string, vfs []helmrender.ValuesFile, res *helmrender.Result, objects int) ChartInfo {
	ci := ChartInfo{Path: chart, Name: res.ChartName, Version: res.ChartVersion, Release: release, Via: via, KubeVersion: res.KubeVersion, Objects: objects}
	for _, vf := range vfs {
		ci.ValuesFiles = append(ci.ValuesFiles, vf.Name)
	}
	return ci
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// chartError turns a helmrender error into a *ChartError naming the file
// relative to the repository.
func chartError(chart string, vfs []helmrender.ValuesFile, err error) error {
	var he *helmrender.Error
	if !errors.As(err, &he) {
		return fmt.Errorf("deployplan: Helm chart %s: %w", chart, err)
	}
	ce := &ChartError{Chart: chart, Reason: he.Reason, Hint: he.Hint}
	if he.File != "" {
		ce.File = path.Join(chart, he.File)
		for _, vf := range vfs {
			if vf.Name == he.File {
				ce.File = he.File
			}
		}
	}
	return ce
}

// linkReasonFor says whether p, a folder above it, or (for a folder) a
// file below it is a symbolic link that was not copied, or a copied link
// whose target is outside within.
func linkReasonFor(rfs *repoFS, p, within string) (file, reason string, bad bool) {
	for q := p; q != memRoot && q != "/" && q != "."; q = path.Dir(q) {
		if r, ok := rfs.links[q]; ok {
			return relRepo(q), r, true
		}
	}
	var hits []string
	for l := range rfs.links {
		if strings.HasPrefix(l, p+"/") {
			hits = append(hits, l)
		}
	}
	for l, target := range rfs.linkTargets {
		if (l == p || strings.HasPrefix(l, p+"/")) && target != within && !strings.HasPrefix(target, within+"/") {
			hits = append(hits, l)
		}
	}
	if len(hits) == 0 {
		return "", "", false
	}
	sort.Strings(hits)
	if r, ok := rfs.links[hits[0]]; ok {
		return relRepo(hits[0]), r, true
	}
	return relRepo(hits[0]), "a symbolic link that leaves " + relRepo(within) + ": symlinks are not followed out of a chart", true
}

// chartFiles reads the chart folder cdir from the in-memory repository:
// every file under it, by path relative to it. A symbolic link in it (or
// on the way to it) is refused, naming the link.
func chartFiles(rfs *repoFS, cdir string) (map[string][]byte, error) {
	chart := relRepo(cdir)
	if cdir != memRoot && !strings.HasPrefix(cdir, memRoot+"/") {
		return nil, &ChartError{Chart: chart, Reason: "the chart folder leaves the repository", Hint: "vendor the chart into the repository"}
	}
	if f, r, bad := linkReasonFor(rfs, cdir, cdir); bad {
		return nil, &ChartError{Chart: chart, File: f, Reason: r, Hint: "vendor the file into the chart"}
	}
	if !rfs.fs.Exists(cdir) || !rfs.fs.IsDir(cdir) {
		return nil, &ChartError{Chart: chart, Reason: "the chart folder is not in the repository", Hint: "vendor the chart into " + chart}
	}
	files := map[string][]byte{}
	err := rfs.fs.FileSystem.Walk(cdir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := rfs.fs.FileSystem.ReadFile(p)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(p, cdir+"/")] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("deployplan: read Helm chart %s: %w", chart, err)
	}
	return files, nil
}

// entryValuesFiles are the values files of a helmCharts entry, in the
// order Helm applies them: valuesFile, then additionalValuesFiles; none
// with valuesMerge: replace (valuesInline alone).
func entryValuesFiles(hc types.HelmChart) []string {
	if hc.ValuesMerge == "replace" {
		return nil
	}
	var out []string
	for _, f := range append([]string{hc.ValuesFile}, hc.AdditionalValuesFiles...) {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// valuesFiles reads the values files names (valuesFile, in order).
func valuesFiles(rfs *repoFS, owner, dir string, names []string) ([]helmrender.ValuesFile, error) {
	var vfs []helmrender.ValuesFile
	for _, f := range names {
		vf, err := valuesFile(rfs, owner, dir, f)
		if err != nil {
			return nil, err
		}
		vfs = append(vfs, vf)
	}
	return vfs, nil
}

// valuesFile reads a values file named rel from folder dir (of the
// environment's chart, or of the kustomization that names it, which owner
// names), refusing one outside the repository or through a link.
func valuesFile(rfs *repoFS, owner, dir, rel string) (helmrender.ValuesFile, error) {
	bad := func(reason, hint string) error {
		return &ChartError{Chart: owner, File: rel, Reason: reason, Hint: hint}
	}
	if isRemoteRef(rel) {
		return helmrender.ValuesFile{}, bad("a remote values file: nothing is fetched", "vendor the values file into the repository")
	}
	if path.IsAbs(rel) || strings.HasPrefix(rel, `\`) {
		return helmrender.ValuesFile{}, bad("an absolute path", "use a path relative to "+relRepo(dir))
	}
	p := path.Join(dir, rel)
	if p != memRoot && !strings.HasPrefix(p, memRoot+"/") {
		return helmrender.ValuesFile{}, bad("the values file leaves the repository (only files inside it are read)", "keep the values file in the repository")
	}
	name := relRepo(p)
	if f, r, isLink := linkReasonFor(rfs, p, memRoot); isLink {
		return helmrender.ValuesFile{}, &ChartError{Chart: owner, File: f, Reason: r, Hint: "vendor the values file into the repository"}
	}
	if !rfs.fs.Exists(p) || rfs.fs.IsDir(p) {
		return helmrender.ValuesFile{}, &ChartError{Chart: owner, File: name, Reason: "the values file is not in the repository", Hint: "commit it, or fix the path"}
	}
	data, err := rfs.fs.FileSystem.ReadFile(p)
	if err != nil {
		return helmrender.ValuesFile{}, err
	}
	return helmrender.ValuesFile{Name: name, Data: data}, nil
}

// renderFor renders env for a plan or an apply: Helm charts are rendered
// for the Kubernetes version and API versions the target cluster's
// discovery gives, when it answers.
func renderFor(ctx context.Context, env *envconfig.Environment, opts Options) (*Rendered, error) {
	return renderWith(ctx, &renderSeam{env: env, cluster: clusterCapabilities(env, opts)})
}

// clusterCapabilities asks the environment's cluster, once a chart is
// rendered, which Kubernetes version it runs and which API versions (and
// kinds) it serves; ok is false when it does not answer.
func clusterCapabilities(env *envconfig.Environment, opts Options) func(context.Context) (helmrender.Capabilities, bool) {
	return func(ctx context.Context) (helmrender.Capabilities, bool) {
		cfg := opts.RestConfig
		if cfg == nil {
			var err error
			if cfg, err = RestConfig(env, opts.Kubeconfig); err != nil {
				return helmrender.Capabilities{}, false
			}
		}
		cl, err := newClients(cfg)
		if err != nil {
			return helmrender.Capabilities{}, false
		}
		v, err := cl.disc.ServerVersion()
		if err != nil {
			return helmrender.Capabilities{}, false
		}
		caps := helmrender.Capabilities{KubeVersion: releaseVersion(v.GitVersion)}
		// Partial discovery (an aggregated API down) still lists the rest.
		_, lists, _ := cl.disc.ServerGroupsAndResources()
		for _, l := range lists {
			caps.APIVersions = append(caps.APIVersions, l.GroupVersion)
			for _, r := range l.APIResources {
				if !strings.Contains(r.Name, "/") {
					caps.APIVersions = append(caps.APIVersions, l.GroupVersion+"/"+r.Kind)
				}
			}
		}
		return caps, true
	}
}

// releaseVersion is a cluster's reported version when it names a release
// ("" for v0.0.0 and the like: an API server built without its version,
// whose answer would fail every chart's kubeVersion constraint).
func releaseVersion(v string) string {
	if !semver.IsValid(v) || semver.Major(v) == "v0" {
		return ""
	}
	return v
}

// hookOf is an object's helm.sh/hook annotation ("" when it is no hook).
func hookOf(o *unstructured.Unstructured) string {
	return o.GetAnnotations()[helmrender.HookAnnotation]
}

// hookRank orders objects by Helm hook phase, then hook weight.
type hookRank struct{ phase, weight int }

func (a hookRank) less(b hookRank) bool {
	if a.phase != b.phase {
		return a.phase < b.phase
	}
	return a.weight < b.weight
}

// hookOrder is an object's phase (helmrender.HookPhase) and, for a hook,
// its helm.sh/hook-weight (0 when unset or not a number, as Helm does).
func hookOrder(o *unstructured.Unstructured) hookRank {
	p := helmrender.HookPhase(o)
	if p == helmrender.PhaseMain {
		return hookRank{}
	}
	w, _ := strconv.Atoi(strings.TrimSpace(o.GetAnnotations()[helmrender.HookWeightAnnotation]))
	return hookRank{phase: p, weight: w}
}
