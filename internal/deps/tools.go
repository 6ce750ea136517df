//go:build tools

// Package tools keeps modules that the project is about to use in go.mod.
package tools
import (
_ "k8s.io/client-go/kubernetes"
_ "k8s.io/client-go/dynamic/dynamicinformer"
_ "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
_ "github.com/a-h/templ"
_ "github.com/coreos/go-oidc/v3/oidc"
_ "golang.org/x/oauth2"
_ "github.com/gorilla/sessions"
_ "github.com/chromedp/chromedp"
_ "go.uber.org/goleak"
_ "golang.org/x/mod/semver"
_ "github.com/google/go-cmp/cmp"
_ "github.com/go-jose/go-jose/v4"
_ "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
_ "sigs.k8s.io/yaml"
)
