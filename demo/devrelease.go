package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// releaseDev plays dev's release history, so that staging's Apps have run
// two releases and one can be rolled back from its page, and installs
// prod: apply (when set: Options.ApplyEnvironment, the engine's apply)
// applies dev at the manifest repository's first commit (release
// DevPreviousVersion), as a person would from the environment page, and,
// side by side, prod at that commit (release ProdVersion) through its
// seed file prodSeed (prod unprotected, prodSeedYAML: the protected
// environment refuses every apply, so its first install happens here,
// once, as it did before the console ran it); prodSeed is removed after.
// Then release DevVersion is committed in the working clone repoDir and
// published to the bare repository the environments read. The console's
// auto-sync applies that commit once it starts. It returns the release
// commit.
func releaseDev(ctx context.Context, apply func(ctx context.Context, envFile, env string) error, envFile, prodSeed, repoDir string) (string, error) {
	var devErr, prodErr error
	if apply != nil {
		var wg sync.WaitGroup
		wg.Go(func() { prodErr = apply(ctx, prodSeed, ProdEnvironment) })
		devErr = apply(ctx, envFile, DevEnvironment)
		wg.Wait()
	}
	// The seed file goes whatever the applies did: only the environments
	// file names prod afterwards.
	rmErr := os.Remove(prodSeed)
	switch {
	case devErr != nil:
		return "", fmt.Errorf("demo: %s at release %s: %w", DevEnvironment, DevPreviousVersion, devErr)
	case prodErr != nil:
		return "", fmt.Errorf("demo: %s at release %s: %w", ProdEnvironment, ProdVersion, prodErr)
	case rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist):
		return "", fmt.Errorf("demo: %w", rmErr)
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
