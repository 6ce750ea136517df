// Package demoapply applies an environment of a deploy config through the
// engine, with the confirmations a person gives on the environment page:
// the demo's seeding of dev's first release (demo.Options.ApplyEnvironment).
// It lives apart from package demo, which deployplan's tests import.
package demoapply

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
)

// Apply plans and applies environment env of the deploy config envFile
// at its source's head (deployplan.Apply: lock, gates, capture, report in
// <envFile's folder>/reports), waiting up to two minutes for the
// workloads to be healthy. A report that does not end applied is an error
// with the report's text.
func Apply(ctx context.Context, envFile, env string) error {
	cfg, err := envconfig.LoadConfig(envFile)
	if err != nil {
		return fmt.Errorf("demoapply: %w", err)
	}
	e, err := cfg.Env(env)
	if err != nil {
		return fmt.Errorf("demoapply: %w", err)
	}
	rep, err := deployplan.Apply(ctx, e, deployplan.ApplyOptions{
		ReportPath: filepath.Join(filepath.Dir(envFile), "reports", env+"-seed.json"),
		Timeout:    2 * time.Minute, Holder: "deploy-web demo",
		Request: deployplan.ApplyRequest{Env: env, ConfirmEnv: env, ConfirmedNonProduction: true},
	})
	if err != nil {
		return fmt.Errorf("demoapply: apply %s: %w", env, err)
	}
	if rep.Status() != deployplan.StatusApplied {
		return fmt.Errorf("demoapply: apply %s ended %s:\n%s", env, rep.Status(), rep.Markdown())
	}
	return nil
}
