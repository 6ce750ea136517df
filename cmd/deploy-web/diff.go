package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/revdiff"
)

// Exit codes of diff, as diff(1)'s: 0 nothing changes, 1 something does,
// 2 trouble (usage, config, or no diff could be made).
const (
	exitDiffSame    = 0
	exitDiffChanges = 1
	exitDiffTrouble = 2
)

// diffCmd prints what rendering the environment at --ref would change
// against live, for a pull request: Markdown (a summary table, then one
// collapsible section per changed resource) or JSON. It writes nothing to
// the cluster and never changes the environment's target.
func diffCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	config := fs.String("config", "deploy.yaml", "environments config file (YAML)")
	envName := fs.String("env", "", "environment name (required)")
	ref := fs.String("ref", "", "branch, tag, full commit hash or pull/N to render and compare with live (required)")
	format := fs.String("format", "markdown", "what to print: markdown or json")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file when the environment names none (default $KUBECONFIG, ~/.kube/config)")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return exitWith(exitDiffTrouble, err)
	}
	switch {
	case *envName == "":
		return exitWith(exitDiffTrouble, errors.New("--env is required"))
	case *ref == "":
		return exitWith(exitDiffTrouble, errors.New("--ref is required (a branch, a tag, a full commit hash or pull/N)"))
	case *format != "markdown" && *format != "json":
		return exitWith(exitDiffTrouble, fmt.Errorf("--format %q: want markdown or json", *format))
	}
	if err := deployplan.ValidateRef(*ref); err != nil {
		return exitWith(exitDiffTrouble, err)
	}
	cfg, err := envconfig.LoadConfig(*config)
	if err != nil {
		return exitWith(exitDiffTrouble, err)
	}
	env, err := cfg.Env(*envName)
	if err != nil {
		return exitWith(exitDiffTrouble, err)
	}
	rep, err := revdiff.CompareEnvironment(ctx, env, deployplan.Options{Kubeconfig: *kubeconfig, ConfigPath: *config},
		revdiff.LiveSide(), revdiff.RefSide(*ref), nil, revdiff.Options{})
	if err != nil {
		return exitWith(exitDiffTrouble, err)
	}
	if *format == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return exitWith(exitDiffTrouble, fmt.Errorf("encode the diff: %w", err))
		}
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprint(stdout, rep.Markdown())
	}
	if rep.Changes {
		return exitWith(exitDiffChanges, nil)
	}
	return nil
}
