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

package validation

import (
	"fmt"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gridview/gridview/apis/topology"
)

// MaxUnreadyNodes bounds a review's what-if: a review is computed at once,
// and a question about more nodes than a fleet's largest site is better
// asked as a relabel.
const MaxUnreadyNodes = 10_000

// ValidateTopologyReview checks the question a TopologyReview asks.
func ValidateTopologyReview(review *topology.TopologyReview) field.ErrorList {
	var allErrs field.ErrorList
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validateNodeName(review.Spec.NodeName, spec.Child("nodeName"), true)...)
	servicePath := spec.Child("serviceName")
	if review.Spec.ServiceName == "" {
		allErrs = append(allErrs, field.Required(servicePath, "the name of a Service in the review's namespace"))
	} else {
		for _, msg := range validation.IsDNS1035Label(review.Spec.ServiceName) {
			allErrs = append(allErrs, field.Invalid(servicePath, review.Spec.ServiceName, msg))
		}
	}
	allErrs = append(allErrs, metav1validation.ValidateLabels(review.Spec.NodeLabels, spec.Child("nodeLabels"))...)
	unreadyPath := spec.Child("unreadyNodes")
	if len(review.Spec.UnreadyNodes) > MaxUnreadyNodes {
		allErrs = append(allErrs, field.TooMany(unreadyPath, len(review.Spec.UnreadyNodes), MaxUnreadyNodes))
		return allErrs
	}
	seen := sets.New[string]()
	for i, node := range review.Spec.UnreadyNodes {
		if seen.Has(node) {
			allErrs = append(allErrs, field.Duplicate(unreadyPath.Index(i), node))
			continue
		}
		seen.Insert(node)
		allErrs = append(allErrs, validateNodeName(node, unreadyPath.Index(i), false)...)
	}
	return allErrs
}

// validateNodeName accepts node names as kube-apiserver does: DNS subdomains.
func validateNodeName(name string, path *field.Path, required bool) field.ErrorList {
	if name == "" {
		if required {
			return field.ErrorList{field.Required(path, "the name of a Node")}
		}
		return field.ErrorList{field.Invalid(path, name, "must be the name of a Node")}
	}
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		allErrs = append(allErrs, field.Invalid(path, name, fmt.Sprintf("must be the name of a Node: %s", msg)))
	}
	return allErrs
}
