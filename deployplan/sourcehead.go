package deployplan

import (
	"context"
	"errors"
	"fmt"
	"os"

	git "github.com/go-git/go-git/v5"
	"github.com/hanzoai/deploy-web/envconfig"
)

// SourceHead returns the commit env's source ref names now (its branch
// head), reading no more than the refs: a local repository is opened in
// place, a remote one answers one advertisement under
// limits.sourceTimeout, capped like a fetch. An environment with a local
// folder source has no head ("" and no error).
func SourceHead(ctx context.Context, env *envconfig.Environment) (string, error) {
	src := env.Source
	if src.Repo == "" {
		return "", nil
	}
	if local, ok := localRepoPath(src.Repo); ok {
		repo, err := git.PlainOpen(local)
		if err != nil {
			return "", fmt.Errorf("deployplan: open repository %s: %w", local, err)
		}
		h, err := resolveRef(repo, src.Ref)
		if err != nil {
			return "", fmt.Errorf("deployplan: source %s: ref %q: %w", local, src.Ref, err)
		}
		return h.String(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, env.Limits.SourceTimeoutOrDefault())
	defer cancel()
	sess, fail, err := openSource(ctx, src, env.Limits)
	if err != nil {
		return "", err
	}
	defer sess.Close()
	if fullHashRE.MatchString(src.Ref) {
		return src.Ref, nil // a pinned commit is its own head
	}
	plan, err := planFetch(sess.Caps, sess.Refs, src.Ref)
	if err != nil {
		return "", fail(fmt.Sprintf("ref %q", src.Ref), err)
	}
	if len(plan.Wants) != 1 {
		return "", fail(fmt.Sprintf("ref %q", src.Ref), errors.New("the ref names no single commit"))
	}
	return plan.Wants[0].String(), nil
}

// checkedToken is the source's token (source.tokenEnv), checked; "" when
// the source names none.
func checkedToken(src envconfig.Source) (string, error) {
	if src.TokenEnv == "" {
		return "", nil
	}
	if err := envconfig.CheckTokenEnv(src.TokenEnv, src.Repo); err != nil {
		return "", fmt.Errorf("deployplan: source.tokenEnv: %w", err)
	}
	tok := os.Getenv(src.TokenEnv)
	if tok == "" {
		return "", fmt.Errorf("deployplan: source.tokenEnv: $%s is empty", src.TokenEnv)
	}
	return tok, nil
}
