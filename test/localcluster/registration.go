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

package localcluster

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	discoveryv1ac "k8s.io/client-go/applyconfigurations/discovery/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
)

const (
	apiServiceName = "v1alpha1.topology.gridview.io"
	fieldManager   = "gridview-localcluster"
	portName       = "https"
)

var apiServicesResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// registerGridview makes the aggregator route topology.gridview.io to the
// replicas' namespace addresses: a selector-less Service (gridview-apiserver
// runs outside any Pod here) whose EndpointSlice and Endpoints
// syncGridviewEndpoints writes by hand, and the APIService from
// artifacts/deploy trusting the run's serving CA.
func (c *Cluster) registerGridview(ctx context.Context) error {
	client, err := c.quietAdminClient()
	if err != nil {
		return err
	}
	service := corev1ac.Service(gridviewServiceName, gridviewNamespace).
		WithSpec(corev1ac.ServiceSpec().WithPorts(corev1ac.ServicePort().
			WithName(portName).WithProtocol(corev1.ProtocolTCP).WithPort(443).WithTargetPort(intstr.FromInt32(gridviewPort))))
	if _, err := client.CoreV1().Services(gridviewNamespace).Apply(ctx, service, applyOptions); err != nil {
		return fmt.Errorf("applying Service %s/%s: %w", gridviewNamespace, gridviewServiceName, err)
	}
	if err := c.syncGridviewEndpoints(); err != nil {
		return err
	}
	apiService, err := c.localAPIService()
	if err != nil {
		return err
	}
	return c.applier.apply(ctx, apiService)
}

var applyOptions = metav1.ApplyOptions{FieldManager: fieldManager, Force: true}

// quietAdminClient is an admin client that does not print the deprecation
// warning of Endpoints every run: the aggregator may still read them, so
// they are written anyway.
func (c *Cluster) quietAdminClient() (kubernetes.Interface, error) {
	quiet := rest.CopyConfig(c.AdminConfig)
	quiet.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(quiet)
	if err != nil {
		return nil, fmt.Errorf("creating admin client: %w", err)
	}
	return client, nil
}

// syncGridviewEndpoints writes the Service's EndpointSlice and Endpoints
// with the address of every serving replica, all on the same port: what the
// endpoints controllers would write for a Deployment's ready Pods. With no
// replica serving, both are empty and the APIService turns unavailable.
func (c *Cluster) syncGridviewEndpoints() error {
	c.endpointsMu.Lock()
	defer c.endpointsMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), endpointUpdateTimeout)
	defer cancel()
	client, err := c.quietAdminClient()
	if err != nil {
		return err
	}
	ips := c.servingAddresses()

	slice := discoveryv1ac.EndpointSlice(gridviewServiceName, gridviewNamespace).
		WithLabels(map[string]string{
			discoveryv1.LabelServiceName: gridviewServiceName,
			discoveryv1.LabelManagedBy:   fieldManager,
		}).
		WithAddressType(discoveryv1.AddressTypeIPv4).
		WithPorts(discoveryv1ac.EndpointPort().WithName(portName).WithProtocol(corev1.ProtocolTCP).WithPort(gridviewPort))
	for _, ip := range ips {
		slice.WithEndpoints(discoveryv1ac.Endpoint().WithAddresses(ip).
			WithConditions(discoveryv1ac.EndpointConditions().WithReady(true)))
	}
	if _, err := client.DiscoveryV1().EndpointSlices(gridviewNamespace).Apply(ctx, slice, applyOptions); err != nil {
		return fmt.Errorf("applying EndpointSlice %s/%s: %w", gridviewNamespace, gridviewServiceName, err)
	}

	// The slice above is the Service's: kube-controller-manager must not
	// mirror the Endpoints into a second one, which would lag behind.
	endpoints := corev1ac.Endpoints(gridviewServiceName, gridviewNamespace).
		WithLabels(map[string]string{discoveryv1.LabelSkipMirror: "true"})
	if len(ips) > 0 {
		subset := corev1ac.EndpointSubset().
			WithPorts(corev1ac.EndpointPort().WithName(portName).WithProtocol(corev1.ProtocolTCP).WithPort(gridviewPort))
		for _, ip := range ips {
			subset.WithAddresses(corev1ac.EndpointAddress().WithIP(ip))
		}
		endpoints.WithSubsets(subset)
	}
	if _, err := client.CoreV1().Endpoints(gridviewNamespace).Apply(ctx, endpoints, applyOptions); err != nil {
		return fmt.Errorf("applying Endpoints %s/%s: %w", gridviewNamespace, gridviewServiceName, err)
	}
	return nil
}

// localAPIService is artifacts/deploy/apiservice.yaml trusting the run's
// serving CA.
func (c *Cluster) localAPIService() (*unstructured.Unstructured, error) {
	obj, err := c.deployAPIService()
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(c.pki.GridviewCACert)
	if err != nil {
		return nil, fmt.Errorf("reading gridview serving CA: %w", err)
	}
	if err := unstructured.SetNestedField(obj.Object, base64.StdEncoding.EncodeToString(caPEM), "spec", "caBundle"); err != nil {
		return nil, fmt.Errorf("setting caBundle: %w", err)
	}
	return obj, nil
}

// checkGroupServed succeeds once the APIService is Available, a discovery
// request for the group version proxied by kube-apiserver succeeds, and
// kube-apiserver's aggregated OpenAPI includes the group.
func (c *Cluster) checkGroupServed(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(c.AdminConfig)
	if err != nil {
		return fmt.Errorf("creating dynamic client: %w", err)
	}
	apiService, err := dyn.Resource(apiServicesResource).Get(ctx, apiServiceName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("getting APIService: %w", err)
	}
	if status, message := availableCondition(apiService); status != string(metav1.ConditionTrue) {
		return fmt.Errorf("APIService %s Available=%q: %s", apiServiceName, status, message)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.AdminConfig)
	if err != nil {
		return fmt.Errorf("creating discovery client: %w", err)
	}
	resources, err := disc.ServerResourcesForGroupVersion(gridviewGroupVersion)
	if err != nil {
		return fmt.Errorf("discovery of %s: %w", gridviewGroupVersion, err)
	}
	if len(resources.APIResources) == 0 {
		return fmt.Errorf("discovery of %s lists no resources", gridviewGroupVersion)
	}
	return checkOpenAPIAggregated(ctx, disc)
}

// checkOpenAPIAggregated succeeds once kube-apiserver's OpenAPI v3 holds
// the group's schemas. The aggregator fetches them some time after the
// APIService turns Available; until then `kubectl explain` fails.
func checkOpenAPIAggregated(ctx context.Context, disc *discovery.DiscoveryClient) error {
	paths, err := openapi.ToClientWithContext(disc.OpenAPIV3()).PathsWithContext(ctx)
	if err != nil {
		return fmt.Errorf("listing OpenAPI v3 paths: %w", err)
	}
	gv, ok := paths["apis/"+gridviewGroupVersion]
	if !ok {
		return fmt.Errorf("kube-apiserver's OpenAPI v3 has no schemas for %s yet", gridviewGroupVersion)
	}
	schema, err := gv.SchemaWithContext(ctx, runtime.ContentTypeJSON)
	if err != nil {
		return fmt.Errorf("getting OpenAPI v3 schemas of %s: %w", gridviewGroupVersion, err)
	}
	if !bytes.Contains(schema, []byte(`"group":"`+gridviewGroup+`"`)) {
		return fmt.Errorf("OpenAPI v3 schemas of %s name no kind of the group yet", gridviewGroupVersion)
	}
	return nil
}

// availableCondition returns status and message of the Available condition.
func availableCondition(apiService *unstructured.Unstructured) (status, message string) {
	conditions, _, _ := unstructured.NestedSlice(apiService.Object, "status", "conditions")
	for _, raw := range conditions {
		condition, ok := raw.(map[string]any)
		if !ok || condition["type"] != "Available" {
			continue
		}
		status, _ = condition["status"].(string)
		message, _ = condition["message"].(string)
		return status, message
	}
	return "", "no Available condition yet"
}
