package deployplan

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/yamlbudget"
)

// ChartValues is one Helm chart an environment renders and where its
// values come from, for a write-back that changes a value (an image tag)
// where the environment keeps it.
type ChartValues struct {
	// Chart is the chart folder, relative to the repository.
	Chart string
	// Kustomization and Entry name the helmCharts entry that renders the
	// chart (the kustomization relative to the repository); both "" for
	// an environment whose source is the chart folder (source.helm).
	Kustomization, Entry string
	// Layers are the chart's values in the order Helm applies them: the
	// chart's values.yaml first, the highest precedence last.
	Layers []ValuesLayer
}

// ValuesLayer is one source of a chart's values.
type ValuesLayer struct {
	// File is the values file, relative to the repository; "" for
	// inline values.
	File string
	// Inline names inline values: "valuesInline" (of the helmCharts
	// entry) or "source.helm.values" (of the environments file); "" for
	// a file.
	Inline string
	// Values are the layer's values as Helm reads them.
	Values map[string]any
}

// Where the inline values of a ValuesLayer are.
const (
	InlineHelmCharts = "valuesInline"
	InlineSource     = "source.helm.values"
)

// ChartValuesOf lists the charts env renders from fsys (a repository tree,
// the root being the repository root) with their values layers: the
// environment's chart folder (source.helm), or the helmCharts entries of
// the kustomizations its source path reaches. The files are resolved and
// refused as a render does (a values file outside the repository, through
// a link, over the YAML budget).
func ChartValuesOf(ctx context.Context, env *envconfig.Environment, fsys fs.FS) ([]ChartValues, error) {
	rfs, err := repoFSFromFS(ctx, fsys, "the tree of "+envconfig.RedactURL(env.Source.Repo), env.Limits)
	if err != nil {
		return nil, err
	}
	dir := path.Join(memRoot, path.Clean("/"+filepath.ToSlash(env.Source.Path)))
	if h := env.Source.Helm; h != nil {
		cv := ChartValues{Chart: relRepo(dir)}
		l, err := chartDefaults(rfs, dir)
		if err != nil {
			return nil, err
		}
		if cv.Layers, err = fileLayers(rfs, relRepo(dir), dir, h.ValueFiles, l); err != nil {
			return nil, err
		}
		cv.Layers = append(cv.Layers, ValuesLayer{Inline: InlineSource, Values: h.Values})
		return []ChartValues{cv}, nil
	}
	uses, err := checkKustomizations(rfs, dir)
	if err != nil {
		return nil, err
	}
	var out []ChartValues
	for _, u := range uses {
		for i, hc := range u.k.HelmCharts {
			cdir := u.chartDirs[i]
			cv := ChartValues{Chart: relRepo(cdir), Kustomization: relRepo(u.kf), Entry: hc.Name}
			l, err := chartDefaults(rfs, cdir)
			if err != nil {
				return nil, err
			}
			if cv.Layers, err = fileLayers(rfs, relRepo(u.kf), u.dir, entryValuesFiles(hc), l); err != nil {
				return nil, err
			}
			cv.Layers = append(cv.Layers, ValuesLayer{Inline: InlineHelmCharts, Values: hc.ValuesInline})
			out = append(out, cv)
		}
	}
	return out, nil
}

// fileLayers are defaults, then the values files names (of the chart
// or kustomization owner, relative to dir), read and parsed.
func fileLayers(rfs *repoFS, owner, dir string, names []string, defaults ValuesLayer) ([]ValuesLayer, error) {
	vfs, err := valuesFiles(rfs, owner, dir, names)
	if err != nil {
		return nil, err
	}
	out := []ValuesLayer{defaults}
	for _, vf := range vfs {
		l, err := valuesLayer(vf.Name, vf.Data)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// chartDefaults is the values.yaml of the chart folder cdir (empty
// values when it has none).
func chartDefaults(rfs *repoFS, cdir string) (ValuesLayer, error) {
	p := path.Join(cdir, "values.yaml")
	if !rfs.fs.Exists(p) || rfs.fs.IsDir(p) {
		return ValuesLayer{File: relRepo(p)}, nil
	}
	data, err := rfs.fs.FileSystem.ReadFile(p)
	if err != nil {
		return ValuesLayer{}, fmt.Errorf("deployplan: read %s: %w", relRepo(p), err)
	}
	return valuesLayer(relRepo(p), data)
}

// valuesLayer parses a values file under the YAML budget of one file.
func valuesLayer(name string, data []byte) (ValuesLayer, error) {
	if _, err := yamlbudget.Check(name, data, yamlbudget.Budget{}); err != nil {
		return ValuesLayer{}, &ChartError{Chart: name, File: name, Reason: err.Error(), Hint: "keep values files small and without alias bombs"}
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return ValuesLayer{}, &ChartError{Chart: name, File: name, Reason: "not a YAML mapping: " + err.Error(), Hint: "fix the values file"}
	}
	return ValuesLayer{File: name, Values: v}, nil
}
