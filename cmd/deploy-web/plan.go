package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
)

// Exit codes of source-plan, apply and validate-report (docs/plan-and-apply.md, "Exit codes").
const (
	exitFailed  = 1
	exitRefused = 2 // refused, or a usage mistake
	exitBlocked = 3
)

// exitError carries an exit code out of a command; err (if any) is printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

// forbiddenFlags are recognised only to be refused: they ask for something
// deploy-web never does.
var forbiddenFlags = []string{"production", "prod", "allow-production", "allow-secret-reads", "read-secrets", "show-secrets", "force", "force-conflicts", "force-push"}

// addForbiddenFlags registers forbiddenFlags on fs and returns the check
// to run once fs is parsed, before anything is read: the refusal naming
// every forbidden flag given, nil for none.
func addForbiddenFlags(fs *flag.FlagSet) func() error {
	given := map[string]*bool{}
	for _, f := range forbiddenFlags {
		given[f] = fs.Bool(f, false, "refused: deploy-web never does this")
	}
	return func() error {
		var asked []string
		for _, f := range forbiddenFlags {
			if *given[f] {
				asked = append(asked, "--"+f)
			}
		}
		if len(asked) == 0 {
			return nil
		}
		return exitWith(exitRefused, &deployplan.RefusalError{Reason: fmt.Sprintf("%s asks for something deploy-web never does (production, secret reads, force, force-push); nothing was touched", strings.Join(asked, ", "))})
	}
}

// reportFlag is --write-report with an optional value.
type reportFlag struct {
	set  bool
	path string
}

func (r *reportFlag) String() string   { return r.path }
func (r *reportFlag) IsBoolFlag() bool { return true }
func (r *reportFlag) Set(v string) error {
	r.set = true
	switch v {
	case "true":
	case "false":
		r.set = false
	default:
		r.path = v
	}
	return nil
}

// joinOptionalValue turns "--write-report PATH" into "--write-report=PATH"
// (the flag package has no optional values).
func joinOptionalValue(args []string, names ...string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		matched := false
		for _, n := range names {
			if a == "-"+n || a == "--"+n {
				matched = true
			}
		}
		if matched && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

type planFlags struct {
	config, env, kubeconfig, expectCommit, output string
	progress                                      bool
}

func (p *planFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.config, "config", "deploy.yaml", "environments config file (YAML)")
	fs.StringVar(&p.env, "env", "", "environment name (required)")
	fs.StringVar(&p.kubeconfig, "kubeconfig", "", "kubeconfig file when the environment names none (default $KUBECONFIG, ~/.kube/config)")
	fs.StringVar(&p.expectCommit, "expect-commit", "", "commit every image must be tagged with (default: the catalog's commit)")
	fs.StringVar(&p.output, "output", "summary", "what to print: summary, markdown or json")
	fs.BoolVar(&p.progress, "progress", true, "print each step to stderr")
}

func (p *planFlags) load() (*envconfig.Environment, error) {
	if p.env == "" {
		return nil, exitWith(exitRefused, errors.New("--env is required"))
	}
	switch p.output {
	case "summary", "markdown", "json":
	default:
		return nil, exitWith(exitRefused, fmt.Errorf("--output %q: want summary, markdown or json", p.output))
	}
	if p.expectCommit != "" && !deployplan.ValidCommit(p.expectCommit) {
		return nil, exitWith(exitRefused, fmt.Errorf("--expect-commit %q: want a commit (7 to 40 lowercase hex characters)", p.expectCommit))
	}
	cfg, err := envconfig.LoadConfig(p.config)
	if err != nil {
		return nil, exitWith(exitRefused, err)
	}
	env, err := cfg.Env(p.env)
	if err != nil {
		return nil, exitWith(exitRefused, err)
	}
	return env, nil
}

// writeFlags is the flag set of a CLI write (apply, restore) with the
// flags they share: the plan's, the audit records' and the freezes'.
func writeFlags(name string, stderr io.Writer) (*flag.FlagSet, *planFlags, *cliAudit, *cliFreezes) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	pf := &planFlags{}
	pf.register(fs)
	ca := &cliAudit{stderr: stderr}
	ca.register(fs)
	fz := &cliFreezes{stderr: stderr}
	fz.register(fs)
	return fs, pf, ca, fz
}

// setup is the one setup of the CLI's writes (apply, restore, and their
// dry-runs): the environment, checked flags and the engine's options, the
// report going to --write-report's path, else to defaultPath(the
// environment's name).
func (p *planFlags) setup(stderr io.Writer, report reportFlag, defaultPath func(env string) string) (*envconfig.Environment, deployplan.Options, error) {
	env, err := p.load()
	if err != nil {
		return nil, deployplan.Options{}, err
	}
	opts := p.options(stderr)
	opts.ReportPath = cmp.Or(report.path, defaultPath(env.Name))
	return env, opts, nil
}

// showPlan shows a plan (of an apply or a restore): its reports written
// when --write-report was given, then printed as --output says.
func showPlan(stdout, stderr io.Writer, rep *deployplan.Report, report reportFlag, reportPath, output string) error {
	if report.set {
		if err := writeReports(rep, reportPath); err != nil {
			return exitWith(exitFailed, err)
		}
		fmt.Fprintf(stderr, "deploy-web: report written to %s\n", reportPath)
	}
	printReport(stdout, rep, output)
	return nil
}

func (p *planFlags) options(stderr io.Writer) deployplan.Options {
	o := deployplan.Options{Kubeconfig: p.kubeconfig, ConfigPath: p.config, ExpectCommit: p.expectCommit}
	if p.progress {
		o.Progress = func(step string) { fmt.Fprintf(stderr, "deploy-web: %s\n", step) }
	}
	return o
}

// planErrCode is the exit code of a plan that could not be made: a
// configuration mistake (the catalog's fields included) is a usage error
// (2), anything else (the source cannot be read or rendered) an error (1).
func planErrCode(err error) int {
	var ce *envconfig.ConfigError
	if errors.As(err, &ce) {
		return exitRefused
	}
	return exitFailed
}

func usageErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return exitWith(exitRefused, err)
}

// sourcePlanCmd is the offline source planner.
func sourcePlanCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("source-plan", flag.ContinueOnError)
	var pf planFlags
	pf.register(fs)
	check := fs.Bool("check", false, "exit 3 when there is any divergence")
	if err := parseFlags(fs, args); err != nil {
		return usageErr(err)
	}
	env, err := pf.load()
	if err != nil {
		return err
	}
	res, err := deployplan.SourcePlan(ctx, env, pf.options(stderr))
	if err != nil {
		return exitWith(planErrCode(err), err)
	}
	if pf.output == "json" {
		b, _ := json.MarshalIndent(map[string]any{
			"environment": res.Environment, "namespace": res.Namespace, "origin": res.Origin, "sourceCommit": res.SourceCommit,
			"catalogCommit": res.CatalogCommit, "catalogPath": res.CatalogPath,
			"divergences": nonNil(res.Divergences), "disclaimer": deployplan.SourceDisclaimer,
		}, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintf(stdout, "source plan for %s: %s at %s, catalog %s (%s)\n", res.Environment, res.Origin, orNone(res.SourceCommit), res.CatalogPath, catalogLabel(res.CatalogMode, res.CatalogCommit))
		n := 0
		for _, w := range res.Workloads {
			n += len(w.Containers)
		}
		fmt.Fprintf(stdout, "  %d workload(s), %d container(s) checked; every object must be in namespace %s\n", len(res.Workloads), n, res.Namespace)
		if len(res.Divergences) == 0 {
			fmt.Fprintf(stdout, "  converged: every object is in namespace %s, every image is in the catalog (a service tagged as its mode asks, or an admitted third-party image), its digest recorded, and the env mirrors agree\n", res.Namespace)
		}
		for _, d := range res.Divergences {
			fmt.Fprintf(stdout, "  DIVERGENCE %s: %s\n    fix: %s\n", d.ID, d.Message, d.UnblockHint)
		}
		fmt.Fprintln(stdout, deployplan.SourceDisclaimer)
	}
	if *check && len(res.Divergences) > 0 {
		return exitWith(exitBlocked, fmt.Errorf("%d divergence(s)", len(res.Divergences)))
	}
	return nil
}

func nonNil(b []deployplan.Blocker) []deployplan.Blocker {
	if b == nil {
		return []deployplan.Blocker{}
	}
	return b
}

// catalogLabel is how a source plan names its catalog: "commit C" in
// commit mode, "version mode" otherwise (a version-mode catalog has no
// commit of its own).
func catalogLabel(mode, commit string) string {
	if commit == "" {
		return cmp.Or(mode, "version") + " mode"
	}
	return "commit " + commit
}

func orNone(s string) string {
	if s == "" {
		return "(no commit)"
	}
	return s
}

// applyCmd plans (--dry-run, the default) or applies (--apply).
func applyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, pf, ca, fz := writeFlags("apply", stderr)
	dryRun := fs.Bool("dry-run", false, "plan only: write nothing to the cluster (the default without --apply)")
	doApply := fs.Bool("apply", false, "apply (needs --confirm-env and --confirmed-non-production)")
	expectBlocked := fs.Bool("expect-blocked", false, "with --dry-run: exit 0 when the plan is blocked and non-zero when it is ready")
	confirmEnv := fs.String("confirm-env", "", "repeat the environment name to confirm an apply")
	confirmedNonProd := fs.Bool("confirmed-non-production", false, "confirm the environment is not production")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long an apply waits for workload health")
	prune := fs.Bool("prune", false, "with --apply: after the apply, delete the plan's orphans (objects deploy-web applied earlier that the render no longer holds), each captured first")
	pruneMany := fs.Bool("prune-many", false, "with --prune: allow deleting more than 20 orphans, or more than half of the environment's objects")
	planPath := fs.String("plan", "", "with --apply: a ready plan report (from --dry-run --write-report); the apply is refused unless the source commit and the rendered objects are unchanged since that plan")
	var report reportFlag
	fs.Var(&report, "write-report", "write the JSON report (and a .md beside it) to PATH, default reports/<env>/deploy-report.json; an apply always writes it")
	refuseForbidden := addForbiddenFlags(fs)
	if err := parseFlags(fs, joinOptionalValue(args, "write-report")); err != nil {
		return usageErr(err)
	}
	if *dryRun && *doApply {
		return exitWith(exitRefused, errors.New("--dry-run and --apply exclude each other"))
	}
	if *planPath != "" && !*doApply {
		return exitWith(exitRefused, errors.New("--plan goes with --apply: it names the plan to apply"))
	}
	if *prune && !*doApply {
		return exitWith(exitRefused, errors.New("--prune goes with --apply: a plan lists the orphans it would delete"))
	}
	if *pruneMany && !*prune {
		return exitWith(exitRefused, errors.New("--prune-many goes with --prune"))
	}
	if *expectBlocked && *doApply {
		return exitWith(exitRefused, errors.New("--expect-blocked goes with --dry-run, not --apply"))
	}
	if fz.breakGlass != "" && !*doApply {
		return exitWith(exitRefused, errors.New("--break-glass goes with --apply: a plan is never refused by a freeze"))
	}
	// Refused before the config is even read: nothing is touched.
	if err := refuseForbidden(); err != nil {
		return err
	}
	env, opts, err := pf.setup(stderr, report, deployplan.DefaultReportPath)
	if err != nil {
		return err
	}
	reportPath := opts.ReportPath
	opts.KeepArgs = ca.keepArgs(fs)

	if !*doApply {
		rep, err := deployplan.Plan(ctx, env, opts)
		if err != nil {
			return exitWith(planErrCode(err), err)
		}
		if err := showPlan(stdout, stderr, rep, report, reportPath, pf.output); err != nil {
			return err
		}
		blocked := rep.Status() == deployplan.StatusBlocked
		switch {
		case *expectBlocked && blocked:
			return nil
		case *expectBlocked:
			return exitWith(exitFailed, errors.New("expected a blocked plan (--expect-blocked), but it is ready"))
		case blocked:
			return exitWith(exitBlocked, nil)
		}
		return nil
	}

	// The records go where the environment's freezes are, unless
	// --break-glass lets --audit-namespace name another namespace.
	if err := ca.resolve(env, fz.breakGlass); err != nil {
		return err
	}
	start := time.Now()
	refuse := func(err error, plan *deployplan.Report) error {
		ca.write(ctx, env, pf.kubeconfig, envrun.ApplyRecord(audit.VerbApply, env, start, plan, err, nil))
		return refuseWrite(stderr, env, opts, "apply", report.path, err, plan)
	}
	request := deployplan.ApplyRequest{Env: env.Name, ConfirmEnv: *confirmEnv, ConfirmedNonProduction: *confirmedNonProd}
	if err := deployplan.CheckApplyRequest(env, request); err != nil {
		return refuse(err, nil)
	}
	if *prune {
		if err := checkPrune(pf.config, env); err != nil {
			return refuse(err, nil)
		}
	}
	var reviewed *deployplan.Reviewed
	if *planPath != "" {
		data, err := readBounded(*planPath, maxPlanReport)
		if err != nil {
			return refuse(fmt.Errorf("--plan: %w", err), nil)
		}
		if reviewed, err = deployplan.ReviewedPlan(data, env.Name, *planPath); err != nil {
			return refuse(err, nil)
		}
	}
	// A frozen environment refuses the apply (and its prune) before
	// anything is written, unless --break-glass lets this run through.
	override, err := fz.check(ctx, env, pf.kubeconfig)
	if err != nil {
		return refuse(err, nil)
	}
	fz.report(env, override)
	rep, err := deployplan.Apply(ctx, env, deployplan.ApplyOptions{
		Options:    opts,
		Request:    request,
		ReportPath: reportPath,
		Timeout:    *timeout,
		Reviewed:   reviewed,
		Prune:      *prune,
		PruneMany:  *pruneMany,
	})
	var refusal *deployplan.RefusalError
	if errors.As(err, &refusal) {
		return refuse(err, rep)
	}
	ca.write(ctx, env, pf.kubeconfig, applyRecords(ctx, env, start, rep, err, *prune, override)...)
	return finishWrite(stdout, stderr, rep, reportPath, pf.output, err)
}

// refuseWrite answers a refused apply or restore (mode): the blockers of
// its plan, if any, on stderr and, when --write-report named a PATH, a
// report saying refused and why (never over the default path, which an
// apply holding the lock may be writing).
func refuseWrite(stderr io.Writer, env *envconfig.Environment, opts deployplan.Options, mode, namedPath string, err error, plan *deployplan.Report) error {
	if plan != nil {
		for _, b := range plan.DeployApply.RemainingBlockers {
			fmt.Fprintf(stderr, "  BLOCKER %s: %s\n    fix: %s\n", b.ID, b.Message, b.UnblockHint)
		}
	}
	if namedPath != "" {
		reason := err.Error()
		var r *deployplan.RefusalError
		if errors.As(err, &r) {
			reason = "refused: " + r.Reason
		}
		rep := deployplan.RefusedReport(env, opts, mode, reason, plan, time.Now())
		if werr := writeReports(rep, namedPath); werr != nil {
			fmt.Fprintf(stderr, "deploy-web: warning: %v\n", werr)
		} else {
			fmt.Fprintf(stderr, "deploy-web: refusal report written to %s\n", namedPath)
		}
	}
	return exitWith(exitRefused, err)
}

// finishWrite ends an apply or restore that ran: its report (Markdown
// beside the JSON) and summary, and the exit: failed unless applied.
func finishWrite(stdout, stderr io.Writer, rep *deployplan.Report, reportPath, output string, err error) error {
	if rep != nil {
		if werr := writeMarkdown(rep, reportPath); werr != nil && err == nil {
			err = werr
		}
		printReport(stdout, rep, output)
		fmt.Fprintf(stderr, "deploy-web: report written to %s\n", reportPath)
	}
	if err != nil {
		return exitWith(exitFailed, err)
	}
	if rep.Status() != deployplan.StatusApplied {
		return exitWith(exitFailed, errors.New(rep.DeployApply.Conclusion.Summary))
	}
	return nil
}

// maxPlanReport bounds a --plan report read into memory.
const maxPlanReport = 32 << 20

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a plan report", path, limit)
	}
	return data, nil
}

func writeReports(rep *deployplan.Report, path string) error {
	if err := rep.WriteFile(path); err != nil {
		return err
	}
	return writeMarkdown(rep, path)
}

func writeMarkdown(rep *deployplan.Report, path string) error {
	mdPath := strings.TrimSuffix(path, filepath.Ext(path)) + ".md"
	if err := os.MkdirAll(filepath.Dir(mdPath), 0o755); err != nil {
		return err
	}
	// 0600 as the report's JSON (deployplan.Report.WriteFile).
	return os.WriteFile(mdPath, []byte(rep.Markdown()), 0o600)
}

func printReport(w io.Writer, rep *deployplan.Report, output string) {
	switch output {
	case "json":
		b, err := rep.JSON()
		if err == nil {
			w.Write(b)
		}
	case "markdown":
		fmt.Fprint(w, rep.Markdown())
	default:
		fmt.Fprint(w, rep.Summary())
	}
}

// validateReportCmd checks reports against the contract.
func validateReportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate-report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: deploy-web validate-report [PATH ...]   (default: reports/*/deploy-report.json)")
			return err
		}
		return exitWith(exitRefused, err)
	}
	paths := fs.Args()
	if len(paths) == 0 {
		paths, _ = filepath.Glob(filepath.Join("reports", "*", "deploy-report.json"))
		if len(paths) == 0 {
			return exitWith(exitRefused, errors.New("no PATH given and no reports/*/deploy-report.json found"))
		}
	}
	bad := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			// A missing or unreadable file is a usage mistake (2), not a
			// report that breaks the contract (1).
			return exitWith(exitRefused, err)
		}
		vs := deployplan.ValidateReport(data)
		if len(vs) == 0 {
			fmt.Fprintf(stdout, "%s: valid\n", p)
			continue
		}
		bad++
		fmt.Fprintf(stdout, "%s: %d violation(s)\n", p, len(vs))
		for _, v := range vs {
			fmt.Fprintf(stdout, "  %s\n", v)
		}
	}
	if bad > 0 {
		return exitWith(exitFailed, fmt.Errorf("%d of %d report(s) break the contract", bad, len(paths)))
	}
	return nil
}
