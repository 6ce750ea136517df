package helmrender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	cutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/internal/yamlbudget"
)

// DefaultKubeVersion is the Kubernetes version a chart is rendered for
// when neither the target cluster nor the configuration says: the minor
// version deploy-web's Kubernetes client libraries (k8s.io/* v0.37) are
// built for. Helm's own default depends on whether it runs under `go test`
// (v1.20) or not, so it is never used.
const DefaultKubeVersion = "v1.37.0"

// Request is one render of one chart.
type Request struct {
	// Chart names the chart in errors and warnings (its folder in the
	// repository, "charts/podinfo").
	Chart string
	// Files are the chart's files by path relative to the chart folder
	// ("Chart.yaml", "templates/deployment.yaml", "charts/redis-1.2.3.tgz"),
	// read by the caller through its rooted reader. Render does not
	// modify them.
	Files map[string][]byte
	// ReleaseName and Namespace are .Release.Name and .Release.Namespace.
	ReleaseName, Namespace string
	// ValuesFiles are applied over the chart's values.yaml in order (as
	// `helm -f a -f b`), then Values (as --set, but structured).
	ValuesFiles []ValuesFile
	Values      map[string]any
	// IncludeCRDs adds the objects of the charts' crds/ folders.
	IncludeCRDs bool
	// Capabilities are .Capabilities; a zero KubeVersion is
	// DefaultKubeVersion.
	Capabilities Capabilities
	// Limits bound the render; zero fields take their defaults.
	Limits Limits
}

// ValuesFile is a values file as the caller read it.
type ValuesFile struct {
	// Name names it in errors ("envs/dev/values.yaml").
	Name string
	Data []byte
}

// Capabilities are what the chart sees of the cluster.
type Capabilities struct {
	// KubeVersion is "v1.31.2" or "1.31"; "" is DefaultKubeVersion.
	KubeVersion string
	// APIVersions are added to the versions every cluster serves (Helm's
	// built-in list): "group/version" and "group/version/Kind" entries, as
	// discovery or `helm template --api-versions` give them.
	APIVersions []string
}

// Limits bound one render.
type Limits struct {
	// Timeout bounds the template execution (default DefaultTimeout).
	Timeout time.Duration
	// MaxOutputBytes caps the rendered manifests of the chart, all
	// templates together (default DefaultMaxOutputBytes).
	MaxOutputBytes int64
	// MaxFuncBytes caps the bytes template functions return, all calls
	// together (default DefaultMaxFuncBytes): a string doubled in a loop
	// is stopped here even when nothing of it is written.
	MaxFuncBytes int64
	// MaxSteps caps the template steps: range iterations, template and
	// include entries, function calls (default DefaultMaxSteps).
	MaxSteps int64
	// MaxChartBytes caps the chart's files with its vendored dependencies
	// unpacked (default DefaultMaxChartBytes).
	MaxChartBytes int64
}

// Defaults of Limits.
const (
	// DefaultTimeout: a real chart renders in milliseconds (podinfo in
	// about 4 ms, a chart with four subcharts in 40 ms).
	DefaultTimeout = 10 * time.Second
	// DefaultMaxOutputBytes: the apiserver takes 3 MiB per request; a
	// chart of a few dozen objects renders to well under 1 MiB (CRDs, read
	// from crds/ and not templated, do not count).
	DefaultMaxOutputBytes = 8 << 20
	// DefaultMaxFuncBytes: helpers are included many times per object
	// (labels, names), so functions return several times the output.
	DefaultMaxFuncBytes = 128 << 20
	// DefaultMaxSteps: a real chart takes thousands of steps.
	DefaultMaxSteps = 5_000_000
	// DefaultMaxChartBytes: a chart with vendored subcharts is a few
	// hundred KiB.
	DefaultMaxChartBytes = 32 << 20
)

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.MaxFuncBytes <= 0 {
		l.MaxFuncBytes = DefaultMaxFuncBytes
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.MaxChartBytes <= 0 {
		l.MaxChartBytes = DefaultMaxChartBytes
	}
	return l
}

// Result is a rendered chart.
type Result struct {
	// Objects are the rendered objects, CRDs first (with IncludeCRDs),
	// then by template path and document order. Install and upgrade hooks
	// are among them with their helm.sh/hook annotation (HookPhase).
	Objects []*unstructured.Unstructured
	// Warnings are what the caller must tell: calls to lookup or
	// getHostByName, random or clock values, hooks left out.
	Warnings []string
	// KubeVersion is the Kubernetes version the chart was rendered for.
	KubeVersion string
	// ChartName and ChartVersion are the chart's Chart.yaml name and
	// version.
	ChartName, ChartVersion string
}

// Render loads the chart afresh from req.Files (Helm's dependency
// processing mutates a loaded chart), checks its dependencies and values,
// and renders it under req.Limits. ctx bounds it too.
func Render(ctx context.Context, req Request) (*Result, error) {
	lim := req.Limits.withDefaults()
	bad := func(file, reason, hint string) error {
		return &Error{Chart: req.Chart, File: file, Reason: reason, Hint: hint}
	}
	loaded, err := dropIgnored(req.Chart, req.Files)
	if err != nil {
		return nil, err
	}
	files, err := unpackCharts(req.Chart, loaded, lim.MaxChartBytes)
	if err != nil {
		return nil, err
	}
	// Every file Helm decodes as YAML, in the chart and its subcharts,
	// passes its budget before the loader sees it.
	for _, f := range files {
		if !decodedByLoader(f.Name) {
			continue
		}
		if _, err := yamlbudget.Check(f.Name, f.Data, yamlbudget.Budget{}); err != nil {
			return nil, bad(f.Name, budgetReason(err), "fix the file in the repository")
		}
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, bad("", "the chart does not load: "+err.Error(), "fix Chart.yaml and the chart's layout")
	}
	if err := checkDependencies(req.Chart, "", ch); err != nil {
		return nil, err
	}
	vals, err := userValues(req)
	if err != nil {
		return nil, err
	}
	kv := req.Capabilities.KubeVersion
	if kv == "" {
		kv = DefaultKubeVersion
	}
	parsed, err := common.ParseKubeVersion(kv)
	if err != nil {
		return nil, bad("", fmt.Sprintf("Kubernetes version %q does not parse", kv), "give a version such as v1.31.0")
	}
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, parsed.String()) {
		return nil, bad("Chart.yaml", fmt.Sprintf("the chart requires Kubernetes %s; it is rendered for %s", ch.Metadata.KubeVersion, parsed.String()),
			"use a chart version for this Kubernetes version, or set the version charts are rendered for")
	}
	caps := &common.Capabilities{
		KubeVersion: *parsed,
		APIVersions: append(builtinVersions(), req.Capabilities.APIVersions...),
		HelmVersion: common.DefaultCapabilities.HelmVersion,
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return nil, bad("Chart.yaml", "dependencies: "+err.Error(), "fix the dependencies' conditions, tags and import-values")
	}
	opts := common.ReleaseOptions{Name: req.ReleaseName, Namespace: req.Namespace, Revision: 1, IsInstall: true}
	// Helm's schema validation follows $ref anywhere: it is skipped here
	// and done by validateSchemas, which follows one only within the chart.
	top, err := cutil.ToRenderValuesWithSchemaValidation(ch, vals, opts, caps, true)
	if err != nil {
		return nil, bad("values.yaml", "values do not coalesce: "+err.Error(), "fix the values files")
	}
	var schemaWarnings []string
	if v, ok := top["Values"].(common.Values); ok {
		if schemaWarnings, err = validateSchemas(req.Chart, ch, v); err != nil {
			return nil, err
		}
	}

	rctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	eng := newEngine(rctx, req.Chart, lim)
	rendered, err := eng.render(ch, top)
	if err != nil {
		return nil, err
	}
	res := &Result{KubeVersion: parsed.String(), ChartName: ch.Metadata.Name, ChartVersion: ch.Metadata.Version}
	if req.IncludeCRDs {
		for _, crd := range ch.CRDObjects() {
			objs, err := parseManifest(req.Chart, crd.Filename, crd.File.Data)
			if err != nil {
				return nil, err
			}
			res.Objects = append(res.Objects, objs...)
		}
	}
	names := make([]string, 0, len(rendered))
	for n := range rendered {
		names = append(names, n)
	}
	sort.Strings(names)
	applied := map[string]bool{}
	var hookWarnings, tests []string
	for _, n := range names {
		if strings.HasSuffix(n, "NOTES.txt") {
			continue
		}
		objs, err := parseManifest(req.Chart, chartFile(n), []byte(rendered[n]))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			keep, warn := hookKept(o)
			switch {
			case keep:
				applied[n] = true
				res.Objects = append(res.Objects, o)
			case isTestHook(o):
				tests = append(tests, leftOutName(eng, o, n)+" in "+chartFile(n))
			default:
				hookWarnings = append(hookWarnings, fmt.Sprintf("chart %s: %s (%s): %s", req.Chart, chartFile(n), leftOutName(eng, o, n), warn))
			}
		}
	}
	res.Warnings = append(res.Warnings, schemaWarnings...)
	res.Warnings = append(res.Warnings, eng.warnings(func(t string) bool { return applied[t] })...)
	res.Warnings = append(res.Warnings, hookWarnings...)
	if len(tests) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("chart %s: %d test hook(s) left out, deploy-web does not run chart tests (%s)", req.Chart, len(tests), listSome(tests, 5)))
	}
	if n := len(ch.CRDObjects()); n > 0 && !req.IncludeCRDs {
		res.Warnings = append(res.Warnings, fmt.Sprintf("chart %s: the %d file(s) of its crds/ folders are not rendered (CRDs are cluster-scoped: install them out of band)", req.Chart, n))
	}
	return res, nil
}

// leftOutName names object o of template n, left out, in a warning: its
// kind and name, or its kind alone when the template drew a random value
// (a chart test named with randAlphaNum), so the warning reads the same
// at every render (a change of warnings is a change of the environment's
// render to the index, and a plan's reader would see it churn).
func leftOutName(eng *engine, o *unstructured.Unstructured, n string) string {
	if eng.drewRandom(n) {
		return textfmt.Cut(textfmt.Clean(o.GetKind(), false), 160)
	}
	return objText(o)
}

// builtinVersions are the API versions every cluster serves, as Helm
// lists them ("apps/v1"), and with their kinds ("apps/v1/Deployment"), as
// discovery gives them: charts test either form.
func builtinVersions() common.VersionSet {
	vs := append(common.VersionSet{}, common.DefaultVersionSet...)
	seen := map[string]bool{}
	for gvk := range clientgoscheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") {
			continue
		}
		s := gvk.GroupVersion().String() + "/" + gvk.Kind
		if !seen[s] {
			seen[s] = true
			vs = append(vs, s)
		}
	}
	sort.Strings(vs[len(common.DefaultVersionSet):])
	return vs
}

// decodedByLoader reports whether Helm's loader decodes the chart file
// name as YAML: Chart.yaml, Chart.lock, values.yaml (and their legacy
// names) of the chart and of every subchart.
func decodedByLoader(name string) bool {
	base := name
	if i := strings.LastIndex(name, "/"); i >= 0 {
		base = name[i+1:]
		// Only a chart's own top-level files: charts/x/values.yaml is
		// the subchart's, charts/x/templates/values.yaml is a template.
		dir := name[:i]
		parts := strings.Split(dir, "/")
		if len(parts)%2 != 0 {
			return false
		}
		for j := 0; j < len(parts); j += 2 {
			if parts[j] != "charts" {
				return false
			}
		}
	}
	switch base {
	case "Chart.yaml", "Chart.lock", "values.yaml", "requirements.yaml", "requirements.lock":
		return true
	}
	return false
}

// budgetReason is the reason of a yamlbudget error.
func budgetReason(err error) string {
	var be *yamlbudget.Error
	if errors.As(err, &be) {
		return "too complex to decode (" + be.Reason + ")"
	}
	return "does not parse as YAML: " + err.Error()
}

// userValues merges the values files and the inline values, each file
// checked against its YAML budget before it is decoded.
func userValues(req Request) (map[string]any, error) {
	out := map[string]any{}
	for _, vf := range req.ValuesFiles {
		if _, err := yamlbudget.Check(vf.Name, vf.Data, yamlbudget.Budget{}); err != nil {
			return nil, &Error{Chart: req.Chart, File: vf.Name, Reason: budgetReason(err), Hint: "fix the values file"}
		}
		v, err := loader.LoadValues(bytes.NewReader(vf.Data))
		if err != nil {
			return nil, &Error{Chart: req.Chart, File: vf.Name, Reason: "does not parse: " + err.Error(), Hint: "fix the values file"}
		}
		out = loader.MergeMaps(out, v)
	}
	if len(req.Values) > 0 {
		// Through YAML, so numbers are what a values file would give.
		b, err := yaml.Marshal(req.Values)
		if err != nil {
			return nil, &Error{Chart: req.Chart, File: "(inline values)", Reason: err.Error()}
		}
		v, err := loader.LoadValues(bytes.NewReader(b))
		if err != nil {
			return nil, &Error{Chart: req.Chart, File: "(inline values)", Reason: err.Error()}
		}
		out = loader.MergeMaps(out, v)
	}
	return out, nil
}

// objText names a rendered object in a warning: one line, no format
// characters, cut (a hostile chart names its objects).
func objText(o *unstructured.Unstructured) string {
	return textfmt.Cut(textfmt.Clean(o.GetKind()+" "+o.GetName(), false), 160)
}

// listSome is the first max items of list, comma separated, and how many
// more there are.
func listSome(list []string, max int) string {
	if len(list) <= max {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:max], ", "), len(list)-max)
}
