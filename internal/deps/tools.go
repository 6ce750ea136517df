//go:build tools

// Package tools keeps modules that the project is about to use in go.mod.
package tools

import (
	_ "github.com/a-h/templ"
	_ "github.com/chromedp/chromedp"
	_ "github.com/coreos/go-oidc/v3/oidc"
	_ "github.com/go-jose/go-jose/v4"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/gorilla/sessions"
	_ "go.uber.org/goleak"
	_ "golang.org/x/mod/semver"
	_ "golang.org/x/oauth2"
	_ "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	_ "k8s.io/client-go/dynamic/dynamicinformer"
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	_ "sigs.k8s.io/yaml"
)
