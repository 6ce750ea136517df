// Package buildtags holds the build tags every build of deploy-web uses
// (the Makefile's GO_TAGS, the Dockerfile, the binaries the tests build)
// and the check, at run time, that the running binary was built with them.
//
// kustomize's API links Go's plugin package (its loader of Go plugins,
// which deploy-web never uses: only builtin plugins render) unless the
// build carries NoGoPlugin. With it, the binary holds no plugin loader:
// nothing can make it dlopen a shared object.
package buildtags

import (
	"runtime/debug"
	"slices"
	"strings"
)

// NoGoPlugin is the build tag that leaves kustomize's Go plugin loader,
// and with it Go's plugin package, out of the binary.
const NoGoPlugin = "kustomize_disable_go_plugin_support"

// Tags is the -tags value of every build, test, vet and staticcheck run
// of deploy-web.
const Tags = NoGoPlugin

// GoPluginLeftOut reports whether the binary described by bi was built
// with NoGoPlugin. A nil bi (no build information) is not known to be.
func GoPluginLeftOut(bi *debug.BuildInfo) bool {
	if bi == nil {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-tags" && slices.Contains(strings.Split(s.Value, ","), NoGoPlugin) {
			return true
		}
	}
	return false
}

// GoPluginWarning is the start-up warning of a binary that was not built
// with NoGoPlugin (a plain `go build`), "" for one that was. read is
// runtime/debug.ReadBuildInfo.
func GoPluginWarning(read func() (*debug.BuildInfo, bool)) string {
	bi, ok := read()
	if ok && GoPluginLeftOut(bi) {
		return ""
	}
	return "this binary was built without -tags " + NoGoPlugin + ": it links Go's plugin loader (kustomize's), which deploy-web never uses; build it with `make build` or `make image-binary`"
}
