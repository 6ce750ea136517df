package demo

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hanzoai/deploy-web/deployplan"
)

// releaseDev plays dev's release history through the engine, so that
// staging's Apps have run two releases and one can be rolled back from its
// page: it applies dev at the manifest repository's first commit (release
// DevPreviousVersion, as a person would with the plan and apply of the
// environment page), then commits release DevVersion in the working clone
// repoDir and publishes it to the bare repository the environments read.
// The console's auto-sync applies that commit once it starts. It returns
// the release commit.
func releaseDev(ctx context.Context, envFile, repoDir string) (string, error) {
	cfg, err := deployplan.LoadConfig(envFile)
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	dev, err := cfg.Env(DevEnvironment)
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	rep, err := deployplan.Apply(ctx, dev, deployplan.ApplyOptions{
		ReportPath: filepath.Join(filepath.Dir(envFile), "reports", "dev-"+DevPreviousVersion+".json"),
		Timeout:    2 * time.Minute, Holder: "deploy-web demo",
		Request: deployplan.ApplyRequest{Env: DevEnvironment, ConfirmEnv: DevEnvironment, ConfirmedNonProduction: true},
	})
	if err != nil {
		return "", fmt.Errorf("demo: apply %s at release %s: %w", DevEnvironment, DevPreviousVersion, err)
	}
	if rep.Status() != deployplan.StatusApplied {
		return "", fmt.Errorf("demo: apply %s at release %s ended %s:\n%s", DevEnvironment, DevPreviousVersion, rep.Status(), rep.Markdown())
	}
	return commitDevRelease(repoDir)
}

// commitDevRelease commits release DevVersion of dev (its overlay's tags,
// its catalog listing DevPreviousVersion and DevVersion) in the working
// clone repoDir and publishes it to the bare repository beside it, as a
// push would. It returns the commit.
func commitDevRelease(repoDir string) (string, error) {
	repo, err := git.PlainOpen(repoDir)
	if err != nil {
		return "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	if err := commitFiles(repo, devRelease(DevVersion, DevPreviousVersion, DevVersion), "dev: release "+DevVersion); err != nil {
		return "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	bare, err := git.PlainOpen(filepath.Join(filepath.Dir(repoDir), manifestBareDir))
	if err != nil {
		return "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	head, err := copyBranch(repo, bare)
	if err != nil {
		return "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	// The clone's origin/main follows, as after a git push.
	if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", ManifestBranch), head)); err != nil {
		return "", fmt.Errorf("demo: manifest repository: %w", err)
	}
	return head.String(), nil
}
