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

package kubectlgridview

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// errNotServed is what a 404 or 503 means when discovery does not list the
// kind: the aggregated API is not installed or not available, which the
// server's own message ("the server could not find the requested resource")
// does not say.
var errNotServed = errors.New("the topology.gridview.io/v1alpha1 API is not served: is gridview-apiserver installed and its APIService Available? (kubectl get apiservice v1alpha1.topology.gridview.io)")

// apiError explains err, an error of a request for kind: a 404 or 503 with
// the kind missing from discovery is errNotServed; any other API error is
// returned as it is, so that its message is the server's.
func apiError(err error, disc discovery.DiscoveryInterface, kind string) error {
	if !apierrors.IsNotFound(err) && !apierrors.IsServiceUnavailable(err) {
		return err
	}
	served, discoveryErr := kindServed(disc, kind)
	if discoveryErr != nil {
		return errors.Join(err, discoveryErr)
	}
	if !served {
		return errNotServed
	}
	return err
}

// kindServed says whether discovery lists kind in topology.gridview.io/v1alpha1.
func kindServed(disc discovery.DiscoveryInterface, kind string) (bool, error) {
	resources, err := disc.ServerResourcesForGroupVersion(v1alpha1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) || apierrors.IsServiceUnavailable(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, resource := range resources.APIResources {
		if resource.Kind == kind {
			return true, nil
		}
	}
	return false, nil
}
