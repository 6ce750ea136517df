package deployplan

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
)

// KustomizationError is a kustomization entry refused before kustomize
// runs: a remote reference, a path out of the repository, an exec-capable
// feature. Nothing was fetched, executed or written.
type KustomizationError struct {
	// File is the kustomization file, relative to the repository root.
	File string
	// Field and Entry name what was refused ("resources",
	// "https://example.com/x.yaml"); Entry is "" for a whole field.
	Field, Entry string
	// Reason says what is wrong and what to do.
	Reason string
}

func (e *KustomizationError) Error() string { return "deployplan: " + e.Public() }

// Public is the refusal in words a user may read: the file, the field,
// the entry and the reason.
func (e *KustomizationError) Public() string {
	if e.Entry == "" {
		return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Reason)
	}
	return fmt.Sprintf("%s: %s entry %q: %s", e.File, e.Field, e.Entry, e.Reason)
}

// Reasons of a KustomizationError.
const (
	reasonRemote   = "remote resources are not supported: vendor the base into the repository"
	reasonAbsolute = "absolute paths are not supported: use a path relative to the kustomization"
	reasonOutside  = "the path leaves the repository (only files inside it are read): vendor what it points to into the repository"
	reasonPlugins  = "kustomize plugins are not supported (rendering never runs a program nor loads plugin configuration): use the kustomization's own fields (patches, replacements, configMapGenerator, ...)"
)

// isRemoteRef reports whether a kustomization entry would make kustomize
// fetch something: any URL (scheme://), kustomize's git forms (git::,
// github.com/..., user@host:path, a ?ref= query) or anything with a colon
// before its first slash (scp-like hosts, gh:, C:). It errs on the side of
// refusing: a local file whose first path element holds '@' or ':' is
// refused too.
func isRemoteRef(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	if strings.Contains(l, "://") || strings.HasPrefix(l, "git::") || strings.HasPrefix(l, "github.com") ||
		strings.Contains(l, "?") || strings.Contains(l, "_git/") {
		return true
	}
	first, _, _ := strings.Cut(l, "/")
	return strings.ContainsAny(first, "@:")
}

// checkKustomizations validates, before kustomize runs, the kustomization
// in dir and every kustomization it reaches (resources, bases, components),
// all inside the in-memory repository rfs. Every path-valued field is
// checked: resources, bases, components, crds, configurations, patches
// (path), patchesStrategicMerge (file entries), patchesJson6902 (path),
// replacements (path), configMapGenerator and secretGenerator (files, envs,
// env) and openapi (path). Helm fields and plugin fields (generators,
// transformers, validators) are refused outright.
//
// Inline patches are checked against the YAML budget like files; the
// sources of configMapGenerator and secretGenerator that nothing else
// names are marked as raw data for the budget (budgetFS).
func checkKustomizations(rfs *repoFS, dir string) ([]helmUse, error) {
	c := &kustChecker{rfs: rfs, seen: map[string]bool{}, parsed: map[string]bool{}}
	if err := c.dirEntry("source.path", dir); err != nil {
		return nil, err
	}
	if err := c.check(dir); err != nil {
		return nil, err
	}
	var raw []string
	for _, p := range c.raw {
		if !c.parsed[p] {
			raw = append(raw, p)
		}
	}
	rfs.fs.setRaw(raw)
	return c.helm, nil
}

type kustChecker struct {
	rfs  *repoFS
	seen map[string]bool
	// raw are the generator sources (read as data), parsed the files
	// read as YAML; a file in both is parsed.
	raw    []string
	parsed map[string]bool
	// helm are the kustomizations with helmCharts entries.
	helm []helmUse
}

func relRepo(p string) string {
	r := strings.TrimPrefix(strings.TrimPrefix(p, memRoot), "/")
	if r == "" {
		return "."
	}
	return r
}

// kustFile finds dir's kustomization file, "" when there is none.
func (c *kustChecker) kustFile(dir string) string {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := path.Join(dir, n)
		if c.rfs.fs.Exists(p) && !c.rfs.fs.IsDir(p) {
			return p
		}
	}
	return ""
}

// linkReason says whether p (or a folder above it) is a symbolic link
// that was not copied.
func (c *kustChecker) linkReason(p string) (string, bool) {
	for q := p; q != memRoot && q != "/" && q != "."; q = path.Dir(q) {
		if r, ok := c.rfs.links[q]; ok {
			return relRepo(q) + " is " + r, true
		}
	}
	return "", false
}

// resolve checks one path entry of the kustomization file kf (in folder
// dir) and returns its in-memory path.
func (c *kustChecker) resolve(kf, dir, field, entry string) (string, error) {
	bad := func(reason string) error {
		return &KustomizationError{File: relRepo(kf), Field: field, Entry: entry, Reason: reason}
	}
	switch {
	case isRemoteRef(entry):
		return "", bad(reasonRemote)
	case path.IsAbs(entry) || strings.HasPrefix(entry, `\`):
		return "", bad(reasonAbsolute)
	}
	p := path.Join(dir, entry)
	if p != memRoot && !strings.HasPrefix(p, memRoot+"/") {
		return "", bad(reasonOutside)
	}
	if r, ok := c.linkReason(p); ok {
		return "", bad(r + ": vendor the file into the repository")
	}
	return p, nil
}

// dirEntry checks that the environment's kustomize folder p is inside the
// repository and not a refused link.
func (c *kustChecker) dirEntry(field, p string) error {
	if p != memRoot && !strings.HasPrefix(p, memRoot+"/") {
		return &KustomizationError{File: "(config)", Field: field, Entry: relRepo(p), Reason: reasonOutside}
	}
	if r, ok := c.linkReason(p); ok {
		return &KustomizationError{File: "(config)", Field: field, Entry: relRepo(p), Reason: r}
	}
	return nil
}

// kustEntry is one path-valued entry of a kustomization.
type kustEntry struct {
	field, value string
	// exact: the entry is certainly a path (not an inline patch), so a
	// missing file is reported before kustomize runs.
	exact bool
	// raw: kustomize reads the file as data (a generator's files and env
	// files), never as YAML.
	raw bool
}

// kustEntries lists the path entries of a kustomization: trees (resources,
// bases, components: a file or a folder with its own kustomization) and
// files (everything else that names a file). The same list serves the
// checker and the git source's reader, so what is checked is what is read.
func kustEntries(k *types.Kustomization) (trees, files []kustEntry) {
	// The deprecated fields (bases, patchesJson6902, patchesStrategicMerge)
	// are still read by kustomize, so they are checked like the others.
	//lint:ignore SA1019 checked because kustomize still reads it
	bases, json6902, psm := k.Bases, k.PatchesJson6902, k.PatchesStrategicMerge
	for _, f := range []struct {
		field  string
		values []string
	}{{"resources", k.Resources}, {"bases", bases}, {"components", k.Components}} {
		for _, v := range f.values {
			trees = append(trees, kustEntry{field: f.field, value: v, exact: true})
		}
	}
	for _, f := range []struct {
		field  string
		values []string
	}{{"crds", k.Crds}, {"configurations", k.Configurations}} {
		for _, v := range f.values {
			files = append(files, kustEntry{field: f.field, value: v, exact: true})
		}
	}
	for _, p := range k.Patches {
		if p.Path != "" {
			files = append(files, kustEntry{field: "patches", value: p.Path, exact: true})
		}
	}
	for _, p := range json6902 {
		if p.Path != "" {
			files = append(files, kustEntry{field: "patchesJson6902", value: p.Path, exact: true})
		}
	}
	for _, p := range psm {
		// An entry is a file path or an inline patch.
		if !psmInline(p) {
			files = append(files, kustEntry{field: "patchesStrategicMerge", value: strings.TrimSpace(string(p))})
		}
	}
	for _, r := range k.Replacements {
		if r.Path != "" {
			files = append(files, kustEntry{field: "replacements", value: r.Path, exact: true})
		}
	}
	gens := func(field string, g types.GeneratorArgs) {
		for _, fsrc := range g.FileSources {
			// "key=path" or "path".
			if _, p, ok := strings.Cut(fsrc, "="); ok {
				fsrc = p
			}
			files = append(files, kustEntry{field: field + " files", value: fsrc, exact: true, raw: true})
		}
		for _, e := range g.EnvSources {
			files = append(files, kustEntry{field: field + " envs", value: e, exact: true, raw: true})
		}
		if g.EnvSource != "" {
			files = append(files, kustEntry{field: field + " env", value: g.EnvSource, exact: true, raw: true})
		}
	}
	for _, g := range k.ConfigMapGenerator {
		gens("configMapGenerator", g.GeneratorArgs)
	}
	for _, g := range k.SecretGenerator {
		gens("secretGenerator", g.GeneratorArgs)
	}
	if p, ok := k.OpenAPI["path"]; ok {
		files = append(files, kustEntry{field: "openapi", value: p, exact: true})
	}

	return trees, files
}

func (c *kustChecker) check(dir string) error {
	if c.seen[dir] {
		return nil
	}
	c.seen[dir] = true
	kf := c.kustFile(dir)
	if kf == "" {
		return fmt.Errorf("deployplan: %s: no kustomization file (kustomization.yaml) in the folder", relRepo(dir))
	}
	data, err := c.rfs.fs.ReadFile(kf)
	if err != nil {
		return fmt.Errorf("deployplan: read %s: %w", relRepo(kf), err)
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return fmt.Errorf("deployplan: %s: %w", relRepo(kf), err)
	}
	whole := func(field, reason string) error {
		return &KustomizationError{File: relRepo(kf), Field: field, Reason: reason}
	}
	switch {
	case len(k.HelmChartInflationGenerator) > 0:
		return whole("helmChartInflationGenerator", reasonHelmGen)
	case len(k.Generators) > 0:
		return whole("generators", reasonPlugins)
	case len(k.Transformers) > 0:
		return whole("transformers", reasonPlugins)
	case len(k.Validators) > 0:
		return whole("validators", reasonPlugins)
	}

	if err := c.checkInline(kf, &k); err != nil {
		return err
	}
	if err := c.checkHelm(kf, dir, &k); err != nil {
		return err
	}
	trees, files := kustEntries(&k)
	missing := func(e kustEntry, p string) error {
		return &KustomizationError{File: relRepo(kf), Field: e.field, Entry: e.value, Reason: relRepo(p) + " is not in the repository"}
	}
	for _, e := range files {
		p, err := c.resolve(kf, dir, e.field, e.value)
		if err != nil {
			return err
		}
		if e.exact && !c.rfs.fs.Exists(p) {
			return missing(e, p)
		}
		if e.raw {
			c.raw = append(c.raw, p)
		} else {
			c.parsed[p] = true
		}
	}
	for _, e := range trees {
		p, err := c.resolve(kf, dir, e.field, e.value)
		if err != nil {
			return err
		}
		if !c.rfs.fs.Exists(p) {
			return missing(e, p)
		}
		c.parsed[p] = true
		if c.rfs.fs.IsDir(p) {
			if err := c.check(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkHelm checks the helmCharts entries of the kustomization kf (in
// folder dir): each chart vendored as a folder under helmGlobals.chartHome
// (a folder of the repository), no repo:, values files inside the
// repository. Their rendering (renderSeam.inflate) comes after the
// checks of every kustomization.
func (c *kustChecker) checkHelm(kf, dir string, k *types.Kustomization) error {
	if len(k.HelmCharts) == 0 {
		return nil
	}
	home := defaultChartHome
	if k.HelmGlobals != nil && k.HelmGlobals.ChartHome != "" {
		home = k.HelmGlobals.ChartHome
	}
	homeDir, err := c.resolve(kf, dir, "helmGlobals.chartHome", home)
	if err != nil {
		return err
	}
	use := helmUse{kf: kf, dir: dir, k: *k}
	for _, hc := range k.HelmCharts {
		bad := func(reason string) error {
			return &KustomizationError{File: relRepo(kf), Field: "helmCharts", Entry: hc.Name, Reason: reason}
		}
		switch {
		case hc.Name == "":
			return bad(reasonNoName)
		case hc.Repo != "":
			return bad(reasonHelmRepo)
		case hc.NameTemplate != "":
			return bad(reasonHelmName)
		}
		cdir, err := c.resolve(kf, dir, "helmCharts", path.Join(home, hc.Name))
		if err != nil {
			return err
		}
		// kustomize pulls NAME at VERSION into CHARTHOME/NAME-VERSION/NAME.
		if hc.Version != "" {
			if p := path.Join(homeDir, hc.Name+"-"+hc.Version, hc.Name); c.rfs.fs.IsDir(p) {
				cdir = p
			}
		}
		if !c.rfs.fs.Exists(cdir) {
			return bad(relRepo(cdir) + " is not in the repository: vendor the chart there (`helm pull REPO/" + hc.Name + " --untar --untardir " + relRepo(homeDir) + "` on a workstation)")
		}
		for _, f := range append([]string{hc.ValuesFile}, hc.AdditionalValuesFiles...) {
			if f == "" {
				continue
			}
			if _, err := c.resolve(kf, dir, "helmCharts valuesFile", f); err != nil {
				return err
			}
		}
		use.chartDirs = append(use.chartDirs, cdir)
	}
	c.helm = append(c.helm, use)
	return nil
}

// checkInline checks the inline patches of the kustomization kf against
// the YAML budget: kustomize parses each as a document of its own.
func (c *kustChecker) checkInline(kf string, k *types.Kustomization) error {
	//lint:ignore SA1019 checked because kustomize still reads it
	json6902, psm := k.PatchesJson6902, k.PatchesStrategicMerge
	for _, f := range []struct {
		field   string
		patches []types.Patch
	}{{"patches", k.Patches}, {"patchesJson6902", json6902}} {
		for i, p := range f.patches {
			if p.Patch == "" {
				continue
			}
			if err := c.rfs.fs.checkInline(fmt.Sprintf("%s %s[%d]", relRepo(kf), f.field, i), []byte(p.Patch)); err != nil {
				return err
			}
		}
	}
	for i, p := range psm {
		if !psmInline(p) {
			continue // a file, checked when read
		}
		if err := c.rfs.fs.checkInline(fmt.Sprintf("%s patchesStrategicMerge[%d]", relRepo(kf), i), []byte(p)); err != nil {
			return err
		}
	}
	return nil
}

// psmInline reports whether a patchesStrategicMerge entry is an inline
// patch rather than a file path: kustomize reads an entry that does not
// parse as an object as a file, so every one-line entry counts as a path
// (a URL cannot start with '{').
func psmInline(p types.PatchStrategicMerge) bool {
	s := strings.TrimSpace(string(p))
	return strings.Contains(s, "\n") || strings.HasPrefix(s, "{")
}
