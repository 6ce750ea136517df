package devcluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// LoadBalancerIP is the address the cluster's stand-in load balancer gives
// every Ingress and LoadBalancer Service.
const LoadBalancerIP = "127.0.0.1"

// runLoadBalancer stands in for a cloud load balancer and an ingress
// controller, as kind's cloud-provider-kind does: it publishes an address
// in the status of every Ingress and LoadBalancer Service, so that their
// health (which waits for that address) can become Healthy.
func runLoadBalancer(ctx context.Context, cs kubernetes.Interface) {
	f := informers.NewSharedInformerFactory(cs, 10*time.Minute)
	lb := []corev1.LoadBalancerIngress{{IP: LoadBalancerIP}}
	ing := f.Networking().V1().Ingresses().Informer()
	_, _ = ing.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { publishIngress(ctx, cs, obj) },
		UpdateFunc: func(_, obj any) { publishIngress(ctx, cs, obj) },
	})
	svc := f.Core().V1().Services().Informer()
	_, _ = svc.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { publishService(ctx, cs, obj, lb) },
		UpdateFunc: func(_, obj any) { publishService(ctx, cs, obj, lb) },
	})
	f.Start(ctx.Done())
	<-ctx.Done()
	f.Shutdown()
}

func publishIngress(ctx context.Context, cs kubernetes.Interface, obj any) {
	in, ok := obj.(*networkingv1.Ingress)
	if !ok || len(in.Status.LoadBalancer.Ingress) > 0 || in.DeletionTimestamp != nil {
		return
	}
	c := in.DeepCopy()
	c.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: LoadBalancerIP}}
	_, _ = cs.NetworkingV1().Ingresses(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
}

func publishService(ctx context.Context, cs kubernetes.Interface, obj any, lb []corev1.LoadBalancerIngress) {
	s, ok := obj.(*corev1.Service)
	if !ok || s.Spec.Type != corev1.ServiceTypeLoadBalancer || len(s.Status.LoadBalancer.Ingress) > 0 || s.DeletionTimestamp != nil {
		return
	}
	c := s.DeepCopy()
	c.Status.LoadBalancer.Ingress = lb
	_, _ = cs.CoreV1().Services(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
}
