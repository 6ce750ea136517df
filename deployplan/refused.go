package deployplan

import (
	"github.com/hanzoai/deploy-web/envconfig"
	"time"
)

// RefusedReport is the report of an apply (or restore) refused before it
// touched anything: status refused, the reason as summary. When the
// refusal came with a plan (a blocked plan), the plan's findings are kept;
// otherwise the report holds the environment's target and boundary only
// (nothing was rendered). mode is "apply" or "restore".
func RefusedReport(env *envconfig.Environment, opts Options, mode, reason string, plan *Report, now time.Time) *Report {
	var rep Report
	if plan != nil {
		rep = *plan
	} else {
		d := &rep.DeployApply
		d.SchemaVersion, d.Environment = SchemaVersion, env.Name
		d.Target = Target{Context: env.Cluster.Context, Namespace: env.Namespace, Protected: env.Protected}
		if env.Cluster.InCluster {
			d.Target.Context = "(in-cluster)"
		}
		d.ApplyBoundary = boundary(env)
		d.TemplateJobReplacementPolicy = JobPolicy{Allowlist: append([]string{}, env.TemplateJobs.Allowlist...), Namespace: env.Namespace, Rules: jobRules}
		d.ArtifactPlan = ArtifactPlan{PublishStatus: "none", RegistryStatus: "not-checked"}
		d.RollbackHint = RollbackHint{PreApplyCapture: "none: the " + mode + " was refused before it changed anything"}
	}
	d := &rep.DeployApply
	d.Mode = mode
	d.GeneratedAt = now.UTC()
	d.Conclusion = Conclusion{Status: StatusRefused, Summary: reason}
	var cmds []string
	for _, c := range d.ManualCommands {
		if !isApplyCommand(c) {
			cmds = append(cmds, c)
		}
	}
	d.ManualCommands = cmds
	d.normalize()
	return &rep
}
