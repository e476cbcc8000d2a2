/*
Copyright 2026 The gridview Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package wrapper

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

// collection is one upstream list the wrapper reads.
type collection struct {
	name     string
	expected runtime.Object
	// client says whether the client can stream lists (watchlist); nil: it
	// can.
	client any
	list   func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch  func(context.Context, metav1.ListOptions) (watch.Interface, error)
}

// upstreamClients are the collections the wrapper reads and how it asks
// whether the cluster answers.
type upstreamClients struct {
	views, services, nodes, serviceCIDRs collection
	// apiEndpoints and apiSlices are default/kubernetes's Endpoints and
	// EndpointSlice, for their local endpoint annotations.
	apiEndpoints, apiSlices collection
	version                 func(context.Context) error
}

// newUpstreamClients reads the cluster behind config with REST clients of
// the wrapper's own scheme, not client-go's clientsets (see wrapperScheme).
func newUpstreamClients(config *rest.Config, node string) (*upstreamClients, error) {
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, err
	}
	clientFor := func(gv schema.GroupVersion) (*rest.RESTClient, error) {
		c := rest.CopyConfig(config)
		c.GroupVersion, c.APIPath = &gv, "/apis"
		if gv.Group == "" {
			c.APIPath = "/api"
		}
		c.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(wrapperScheme, wrapperCodecs).WithoutConversion()
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		return rest.RESTClientForConfigAndClient(c, httpClient)
	}
	core, err := clientFor(corev1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("creating the core client: %w", err)
	}
	discovery, err := clientFor(discoveryv1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	networking, err := clientFor(networkingv1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("creating the networking client: %w", err)
	}
	topology, err := clientFor(topologyv1alpha1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("creating the gridview client: %w", err)
	}
	field := func(selector string) func(*metav1.ListOptions) {
		return func(o *metav1.ListOptions) { o.FieldSelector = selector }
	}
	apiServer := "metadata.name=" + kubernetesService.Name
	return &upstreamClients{
		views: restCollection(topology, "nodeendpoints", "", &topologyv1alpha1.NodeEndpoints{},
			func() runtime.Object { return &topologyv1alpha1.NodeEndpointsList{} }, field("nodeName="+node)),
		services: restCollection(core, "services", "", &corev1.Service{},
			func() runtime.Object { return &corev1.ServiceList{} }, nil),
		nodes: restCollection(core, "nodes", "", &corev1.Node{},
			func() runtime.Object { return &corev1.NodeList{} }, field("metadata.name="+node)),
		serviceCIDRs: restCollection(networking, "servicecidrs", "", &networkingv1.ServiceCIDR{},
			func() runtime.Object { return &networkingv1.ServiceCIDRList{} }, nil),
		apiEndpoints: restCollection(core, "endpoints", kubernetesService.Namespace, &corev1.Endpoints{},
			func() runtime.Object { return &corev1.EndpointsList{} }, field(apiServer)),
		apiSlices: restCollection(discovery, "endpointslices", kubernetesService.Namespace, &discoveryv1.EndpointSlice{},
			func() runtime.Object { return &discoveryv1.EndpointSliceList{} }, field(apiServer)),
		version: func(ctx context.Context) error { return core.Get().AbsPath("/version").Do(ctx).Error() },
	}, nil
}

// restCollection lists and watches a resource as client-go's typed clients
// do.
func restCollection(client *rest.RESTClient, resource, namespace string, expected runtime.Object, newList func() runtime.Object, tweak func(*metav1.ListOptions)) collection {
	request := func(opts *metav1.ListOptions) *rest.Request {
		if tweak != nil {
			tweak(opts)
		}
		req := client.Get().NamespaceIfScoped(namespace, namespace != "").Resource(resource).VersionedParams(opts, wrapperParameterCodec)
		if opts.TimeoutSeconds != nil {
			req = req.Timeout(time.Duration(*opts.TimeoutSeconds) * time.Second)
		}
		return req
	}
	return collection{
		name: resource, expected: expected,
		list: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			out := newList()
			return out, request(&opts).Do(ctx).Into(out)
		},
		watch: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			return request(&opts).Watch(ctx)
		},
	}
}
