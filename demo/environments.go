package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The demo's deploy environments: one manifest repository (a bare git
// repository on disk, read and written through file://, with a working
// clone beside it) with a kustomize base and three overlays, and an
// environments file naming them: dev -> staging -> prod, the promotion
// chain, with staging one version behind dev at start.
const (
	// DevEnvironment deploys overlays/dev into StagingNamespace; it is not
	// protected, so the console may apply it.
	DevEnvironment = "dev"
	// StagingEnvironment deploys overlays/staging into PreprodNamespace;
	// it is promoted from dev (promotion.after) and auto-syncs its branch,
	// so it runs StagingVersion from the demo's start.
	StagingEnvironment = "staging"
	// ProdEnvironment renders overlays/prod for ProductionNamespace; it is
	// protected, so every apply is refused, and promoted from staging: a
	// promotion into it is a request, then a review branch.
	ProdEnvironment = "prod"
	// StagingNamespace is a platform namespace (the fleet shows what dev
	// applies there and the operator reconciles it). It starts empty.
	StagingNamespace = "staging"
	// PreprodNamespace is the platform namespace StagingEnvironment
	// deploys to (the namespace "staging" is dev's, a name kept from the
	// two-environment demo).
	PreprodNamespace = "preprod"
	// ProductionNamespace is a platform namespace (so the matrix reads
	// prod and a promotion can target it), empty: nothing applies prod.
	ProductionNamespace = "production"
	// HistoryNamespace holds the console's plan-history ConfigMaps.
	HistoryNamespace = "deploy-web"

	// ManifestBranch is the branch both environments follow.
	ManifestBranch = "main"
	// EnvironmentsFileName is the environments file in the demo folder.
	EnvironmentsFileName = "environments.yaml"
	// manifestRepoDir is the working clone of the manifest repository in
	// the demo folder (a person commits there and pushes);
	// manifestBareDir is the bare repository the environments read and
	// the console pushes to (file://).
	manifestRepoDir = "manifests"
	manifestBareDir = "manifests.git"

	// AppCommit is the (made-up) application commit the catalog publishes
	// and every image of the manifests is tagged with (its first 12
	// characters): the plan's artifact gates require workload tags, App CRs
	// included, to be the catalog commit.
	AppCommit = "7d1c4e9a2b3f60158c0ad1e2b4c6f8a9e0d3b5c7"

	// ProdVersion is the release the prod overlay deploys: its images are
	// tagged with this version, and prod's catalog
	// (artifacts/catalog-prod.json) is in version mode.
	ProdVersion = "1.4.2"
	// StagingVersion is the release the staging overlay deploys (its
	// catalog, artifacts/catalog-staging.json, is in version mode): one
	// step behind dev, one ahead of prod.
	StagingVersion = "1.5.0"
	// PromotionSoak is the soak of staging's and prod's promotions: short,
	// so a fresh demo can be promoted at once (the default is 10m).
	PromotionSoak = "30s"

	manifestRegistry = "registry.demo.local/inventory/"
)

// ImageTag is the tag of every image in the demo's manifests.
var ImageTag = AppCommit[:12]

// EnvironmentApps are the Apps the demo's manifests declare (in every
// overlay); DevEnvironment applies them to StagingNamespace,
// StagingEnvironment to PreprodNamespace.
func EnvironmentApps() []string { return []string{"api", "worker"} }

// envLogApps gives the environments' Apps pod logs once they run (by
// container name: api and worker in every namespace).
func envLogApps() []seedApp {
	return []seedApp{{name: "api", logs: "http"}, {name: "worker", logs: "worker"}}
}

// ManifestFiles is the content of the demo's manifest repository, by
// path (deployplan's render benchmark renders it).
func ManifestFiles() map[string]string { return manifestFiles() }

// manifestFiles is the repository's content.
func manifestFiles() map[string]string {
	img := func(svc string) string { return manifestRegistry + svc + ":" + ImageTag }
	digest := func(svc string) string {
		sum := sha256.Sum256([]byte("deploy-web demo " + svc + " " + AppCommit))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	type service struct {
		ID        string `json:"id"`
		Image     string `json:"image"`
		Digest    string `json:"digest"`
		Published bool   `json:"published"`
	}
	cat := struct {
		Commit   string    `json:"commit"`
		Services []service `json:"services"`
	}{Commit: AppCommit}
	for _, s := range EnvironmentApps() {
		cat.Services = append(cat.Services, service{ID: s, Image: img(s), Digest: digest(s), Published: true})
	}
	catJSON, err := json.MarshalIndent(cat, "", "  ")
	if err != nil {
		panic(err) // static data
	}
	// staging's and prod's catalogs are in version mode: each service at
	// its version with its digest; the commit is only reported.
	type versioned struct {
		ID        string `json:"id"`
		Image     string `json:"image"`
		Tag       string `json:"tag"`
		Digest    string `json:"digest"`
		Published bool   `json:"published"`
	}
	versionCatalog := func(version string) string {
		c := struct {
			Mode     string      `json:"mode"`
			Commit   string      `json:"commit"`
			Services []versioned `json:"services"`
		}{Mode: "version", Commit: AppCommit}
		for _, s := range EnvironmentApps() {
			c.Services = append(c.Services, versioned{ID: s, Image: manifestRegistry + s, Tag: version, Digest: digest(s + " " + version), Published: true})
		}
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			panic(err) // static data
		}
		return string(b) + "\n"
	}
	// overlay is a release overlay: the Apps' images (through
	// app-image.yaml, which maps images to spec/image) and the Job's at
	// version, the edit a promotion makes (docs/promotion.md).
	overlay := func(ns, version, extra string) string {
		var b strings.Builder
		b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
		fmt.Fprintf(&b, "namespace: %s\nresources:\n  - ../../base\nconfigurations:\n  - app-image.yaml\nimages:\n", ns)
		for _, s := range EnvironmentApps() {
			fmt.Fprintf(&b, "  - {name: %s, newTag: \"%s\"}\n", manifestRegistry+s, version)
		}
		return b.String() + extra
	}
	const appImage = "# kustomize's images field also sets an App's spec/image.\nimages:\n  - {path: spec/image, kind: App}\n"
	return map[string]string{
		"README.md": "# inventory manifests (deploy-web demo)\n\n" +
			"`base/` declares the Apps (hanzo.ai/v1 App) and the suspended template Job `db-migrate`;\n" +
			"`overlays/dev` deploys them to namespace `staging`, `overlays/staging` to `preprod`, `overlays/prod` to `production`.\n" +
			"`artifacts/catalog.json` is the artifact catalog of the application commit the images are tagged with (dev);\n" +
			"`artifacts/catalog-staging.json` and `artifacts/catalog-prod.json` are staging's and prod's, in version mode:\n" +
			"releases " + StagingVersion + " and " + ProdVersion + ", a tag and digest per service.\n",
		"base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
			"labels:\n  - pairs: {team: inventory}\n" +
			"resources:\n  - api.yaml\n  - worker.yaml\n  - db-migrate.yaml\n",
		"base/api.yaml": "apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n" +
			"  image: " + img("api") + "\n  replicas: 2\n  port: 8080\n" +
			"  env:\n    - {name: LOG_LEVEL, value: info}\n",
		"base/worker.yaml": "apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: worker\nspec:\n" +
			"  image: " + img("worker") + "\n  replicas: 2\n" +
			"  env:\n    - {name: QUEUE, value: inventory-events}\n",
		// A template Job: kept suspended, replaced (deleted and re-created)
		// by an apply when its image changes; it ships in the api image.
		"base/db-migrate.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: db-migrate\nspec:\n  suspend: true\n" +
			"  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n" +
			"        - name: migrate\n          image: " + img("api") + "\n          args: [migrate, up]\n",
		"overlays/dev/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
			"namespace: " + StagingNamespace + "\nresources:\n  - ../../base\n",
		// staging runs the release StagingVersion, prod ProdVersion with
		// 4 api replicas.
		"overlays/staging/kustomization.yaml": overlay(PreprodNamespace, StagingVersion, ""),
		"overlays/staging/app-image.yaml":     appImage,
		"overlays/prod/kustomization.yaml": overlay(ProductionNamespace, ProdVersion,
			"patches:\n  - target: {group: hanzo.ai, kind: App, name: api}\n    patch: |\n      - {op: replace, path: /spec/replicas, value: 4}\n"),
		"overlays/prod/app-image.yaml":   appImage,
		"artifacts/catalog.json":         string(catJSON) + "\n",
		"artifacts/catalog-staging.json": versionCatalog(StagingVersion),
		"artifacts/catalog-prod.json":    versionCatalog(ProdVersion),
	}
}

// seedManifests creates the manifest repository in dir/manifests (one
// commit on ManifestBranch) and writes dir/environments.yaml for it. The
// environments reach the demo cluster through kubeconfig (context
// "devcluster"). It returns the environments file and the repository.
func seedManifests(dir, kubeconfig string) (envFile, repoDir string, err error) {
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", fmt.Errorf("demo: %w", err)
	}
	if kubeconfig, err = filepath.Abs(kubeconfig); err != nil {
		return "", "", fmt.Errorf("demo: %w", err)
	}
	repoDir = filepath.Join(dir, manifestRepoDir)
	if err := os.RemoveAll(repoDir); err != nil { // a reused --dir starts over
		return "", "", fmt.Errorf("demo: %w", err)
	}
	repo, err := git.PlainInitWithOptions(repoDir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(ManifestBranch)},
	})
	if err != nil {
		return "", "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	for p, content := range manifestFiles() {
		full := filepath.Join(repoDir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", "", fmt.Errorf("demo: %w", err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return "", "", fmt.Errorf("demo: %w", err)
		}
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	if err := wt.AddGlob("."); err != nil {
		return "", "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	sig := &object.Signature{Name: "deploy-web demo", Email: "demo@deploy-web.invalid", When: time.Now()}
	if _, err := wt.Commit("inventory: api and worker at "+ImageTag+", db-migrate template Job", &git.CommitOptions{Author: sig}); err != nil {
		return "", "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	bareDir := filepath.Join(dir, manifestBareDir)
	if err := publishBare(repo, bareDir); err != nil {
		return "", "", fmt.Errorf("demo: manifest repository: %w", err)
	}

	envFile = filepath.Join(dir, EnvironmentsFileName)
	if err := os.WriteFile(envFile, []byte(environmentsYAML("file://"+bareDir, kubeconfig)), 0o600); err != nil {
		return "", "", fmt.Errorf("demo: %w", err)
	}
	return envFile, repoDir, nil
}

// publishBare makes bareDir a bare repository holding repo's objects and
// its ManifestBranch, and makes it repo's origin (ManifestBranch tracking
// origin's), so a person commits in repo and pushes there, where the
// console reads and pushes too. It copies the objects in process: no git
// program runs.
func publishBare(repo *git.Repository, bareDir string) error {
	if err := os.RemoveAll(bareDir); err != nil { // a reused --dir starts over
		return err
	}
	bare, err := git.PlainInitWithOptions(bareDir, &git.PlainInitOptions{Bare: true,
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(ManifestBranch)}})
	if err != nil {
		return err
	}
	objs, err := repo.Storer.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return err
	}
	if err := objs.ForEach(func(o plumbing.EncodedObject) error {
		_, err := bare.Storer.SetEncodedObject(o)
		return err
	}); err != nil {
		return err
	}
	head, err := repo.Head()
	if err != nil {
		return err
	}
	branch := plumbing.NewBranchReferenceName(ManifestBranch)
	if err := bare.Storer.SetReference(plumbing.NewHashReference(branch, head.Hash())); err != nil {
		return err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{bareDir}}); err != nil {
		return err
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", ManifestBranch), head.Hash())); err != nil {
		return err
	}
	return repo.CreateBranch(&config.Branch{Name: ManifestBranch, Remote: "origin", Merge: branch})
}

// CommitExample is a one-line commit a person runs in the working clone
// cloneDir to change the dev environment through git: auto-sync applies
// it within its interval.
func CommitExample(cloneDir string) string {
	return fmt.Sprintf("cd %s && git pull -q && sed -i 's/replicas: 2/replicas: 3/' base/worker.yaml && git commit -qam 'worker: 3 replicas' && git push -q", cloneDir)
}

// devGitOpsYAML closes the dev environment's entry: write-back, so a
// rollback from the console is a commit on main, and auto-sync with
// self-heal, so a commit to main goes live and a field changed by hand is
// put back.
const devGitOpsYAML = `    # GitOps: a rollback from the console commits to main (writeBack,
    # push); a commit pushed to main goes live within 15s (autoSync); a
    # field of a rendered object changed by hand is put back 30s later
    # (selfHeal). See docs/gitops.md.
    writeBack: {mode: push}
    autoSync: {enabled: true, selfHeal: true, interval: 15s, grace: 30s}
`

// stagingGitOpsYAML closes the staging environment's entry: promoted
// from dev (a promotion is a commit on main, write-back push) and
// auto-synced, so it runs its overlay from the demo's start and a
// promotion goes live.
var stagingGitOpsYAML = `    # Promoted from dev (docs/promotion.md): a promotion commits dev's
    # versions into overlays/staging on main (writeBack, push), and
    # auto-sync applies it; the soak is short for the demo (default 10m).
    writeBack: {mode: push}
    autoSync: {enabled: true, interval: 15s}
    promotion: {after: ` + DevEnvironment + `, soak: ` + PromotionSoak + `}
`

// prodGitOpsYAML closes the prod environment's entry: promoted from
// staging; protected, so a promotion is a request another approver
// approves, written as a review branch (writeBack, branch).
var prodGitOpsYAML = `    # Promoted from staging: protected, so a promotion is a request that
    # another approver approves, then a review branch (writeBack, branch);
    # main is never written.
    writeBack: {mode: branch}
    promotion: {after: ` + StagingEnvironment + `, soak: ` + PromotionSoak + `}
`

// environmentsYAML is the demo's deploy config (the format of docs/plan-and-apply.md).
func environmentsYAML(repoURL, kubeconfig string) string {
	env := func(name, ns string, protected bool, path, catalog, comment string) string {
		return fmt.Sprintf(`  # %s
  - name: %s
    cluster: {context: devcluster, kubeconfig: %q}
    namespace: %s
    protected: %t
    source: {repo: %q, ref: %s, path: %s}
    catalog: %s
    templateJobs: {allowlist: [db-migrate]}
    # registry.demo.local does not exist, so registry.hosts lists no
    # registry: none is contacted, and each plan warns that the digests
    # at registry.demo.local are not proven. A real environment lists the
    # registries it trusts: registry: {hosts: [ghcr.io, index.docker.io]}.
    registry: {hosts: []}
`, comment, name, kubeconfig, ns, protected, repoURL, ManifestBranch, path, catalog)
	}
	return strings.Join([]string{
		"# deploy-web demo environments (written by `deploy-web demo`).\nenvironments:\n",
		env(DevEnvironment, StagingNamespace, false, "overlays/dev", "artifacts/catalog.json", "dev: plan and apply from the console (/environments/dev)") + devGitOpsYAML,
		env(StagingEnvironment, PreprodNamespace, false, "overlays/staging", "artifacts/catalog-staging.json", "staging: release "+StagingVersion+" (a version-mode catalog), one step behind dev") + stagingGitOpsYAML,
		env(ProdEnvironment, ProductionNamespace, true, "overlays/prod", "artifacts/catalog-prod.json", "prod: release "+ProdVersion+" (a version-mode catalog); protected, so the plan is shown but every apply is refused") + prodGitOpsYAML,
	}, "")
}
