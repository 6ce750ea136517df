package operator

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// CRDManifest is the App CustomResourceDefinition (crd.yaml).
//
//go:embed crd.yaml
var CRDManifest []byte

// CRD returns the App CustomResourceDefinition.
func CRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(CRDManifest, crd); err != nil {
		return nil, fmt.Errorf("operator: parse crd.yaml: %w", err)
	}
	return crd, nil
}

// InstallCRD creates or updates the App CRD and waits until it is
// Established.
func InstallCRD(ctx context.Context, client apiextensionsclient.Interface) error {
	crd, err := CRD()
	if err != nil {
		return err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	existing, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("operator: create crd: %w", err)
		}
	case err != nil:
		return fmt.Errorf("operator: get crd: %w", err)
	default:
		crd.ResourceVersion = existing.ResourceVersion
		if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("operator: update crd: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil {
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("operator: crd %s not established: %w", crd.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
