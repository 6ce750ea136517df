package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
)

// restoreCmd re-applies a pre-apply capture with the guards of an apply.
func restoreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, pf, ca, fz := writeFlags("restore", stderr)
	capture := fs.String("capture", "", "the pre-apply capture folder to re-apply (required)")
	dryRun := fs.Bool("dry-run", false, "plan the restore only: write nothing to the cluster")
	confirmEnv := fs.String("confirm-env", "", "repeat the environment name to confirm the restore")
	confirmedNonProd := fs.Bool("confirmed-non-production", false, "confirm the environment is not production")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long a restore waits for workload health")
	var report reportFlag
	fs.Var(&report, "write-report", "write the JSON report (and a .md beside it) to PATH, default reports/<env>/restore-report.json; a restore always writes it")
	refuseForbidden := addForbiddenFlags(fs)
	if err := parseFlags(fs, joinOptionalValue(args, "write-report")); err != nil {
		return usageErr(err)
	}
	if err := refuseForbidden(); err != nil {
		return err
	}
	if fz.breakGlass != "" && *dryRun {
		return exitWith(exitRefused, errors.New("--break-glass goes without --dry-run: a plan is never refused by a freeze"))
	}
	if *capture == "" {
		return exitWith(exitRefused, errors.New("--capture DIR is required: the pre-apply-<time> folder an apply wrote beside its report"))
	}
	env, opts, err := pf.setup(stderr, report, deployplan.DefaultRestoreReportPath)
	if err != nil {
		return err
	}
	reportPath := opts.ReportPath
	opts.KeepArgs = ca.keepArgs(fs)
	start := time.Now()
	request := deployplan.ApplyRequest{Env: env.Name, ConfirmEnv: *confirmEnv, ConfirmedNonProduction: *confirmedNonProd}
	var override *freeze.Override
	if !*dryRun {
		// The records go where the environment's freezes are, unless
		// --break-glass lets --audit-namespace name another namespace.
		if err := ca.resolve(env, fz.breakGlass); err != nil {
			return err
		}
		// As an apply: protection and confirmation, then the freezes,
		// before the capture is even read.
		err := deployplan.CheckApplyRequest(env, request)
		if err == nil {
			override, err = fz.check(ctx, env, pf.kubeconfig)
		}
		if err != nil {
			ca.write(ctx, env, pf.kubeconfig, envrun.ApplyRecord(audit.VerbRestore, env, start, nil, err, nil))
			return refuseWrite(stderr, env, opts, "restore", report.path, err, nil)
		}
		fz.report(env, override)
	}
	rep, err := deployplan.Restore(ctx, env, deployplan.RestoreOptions{
		Options:    opts,
		Request:    request,
		Capture:    *capture,
		DryRun:     *dryRun,
		ReportPath: reportPath,
		Timeout:    *timeout,
	})
	if !*dryRun {
		// A restore re-applies the capture: its objects are the manifests.
		var applied []*unstructured.Unstructured
		if rep != nil && err == nil {
			applied, _, _ = deployplan.ReadCapture(*capture)
		}
		ca.write(ctx, env, pf.kubeconfig, envrun.WithBreakGlass(envrun.ApplyRecord(audit.VerbRestore, env, start, rep, err, applied), override))
	}
	var refusal *deployplan.RefusalError
	if errors.As(err, &refusal) {
		return refuseWrite(stderr, env, opts, "restore", report.path, err, rep)
	}
	if err != nil && rep == nil {
		return exitWith(exitFailed, err)
	}
	if *dryRun {
		if err := showPlan(stdout, stderr, rep, report, reportPath, pf.output); err != nil {
			return err
		}
		if rep.Status() == deployplan.StatusBlocked {
			return exitWith(exitBlocked, nil)
		}
		return nil
	}
	return finishWrite(stdout, stderr, rep, reportPath, pf.output, err)
}

// checkPrune refuses --prune when another environment of the config
// writes the same namespace of the same cluster: their objects would look
// like each other's orphans.
func checkPrune(configPath string, env *envconfig.Environment) error {
	cfg, err := envconfig.LoadConfig(configPath)
	if err != nil {
		return err
	}
	if others := deployplan.SharedNamespace(cfg, env); len(others) > 0 {
		return &deployplan.RefusalError{Reason: fmt.Sprintf("--prune: environment(s) %s write the same namespace %s of the same cluster, so their objects look like orphans of %s; nothing was touched",
			strings.Join(others, ", "), env.Namespace, env.Name)}
	}
	return nil
}
