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

// Package validation checks ServiceGrids before they are stored.
package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gridview/gridview/apis/topology"
)

// ServiceNameSuffix is appended to a ServiceGrid's name to name its Service,
// as SuperEdge's application-grid-controller does.
const ServiceNameSuffix = "-svc"

// MaxServiceGridNameLength leaves room for ServiceNameSuffix in a Service
// name, which is a DNS-1035 label of at most 63 characters.
const MaxServiceGridNameLength = validation.DNS1035LabelMaxLength - len(ServiceNameSuffix)

var (
	supportedFallbacks = sets.New(string(topology.FallbackNone), string(topology.FallbackAny))
	supportedProtocols = sets.New(string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP))
)

// ValidateServiceGridName accepts names whose Service name, <name>-svc, is a
// valid DNS-1035 label. A generateName prefix is checked as the start of such a
// name; the generated name is checked in full once it exists.
func ValidateServiceGridName(name string, prefix bool) []string {
	if prefix {
		name += "x"
	}
	if len(name) > MaxServiceGridNameLength {
		return []string{fmt.Sprintf("must be no more than %d characters, so that the Service name %q fits in %d",
			MaxServiceGridNameLength, name+ServiceNameSuffix, validation.DNS1035LabelMaxLength)}
	}
	return validation.IsDNS1035Label(name)
}

// ValidateServiceGrid validates a ServiceGrid on create.
func ValidateServiceGrid(sg *topology.ServiceGrid) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&sg.ObjectMeta, true, ValidateServiceGridName, field.NewPath("metadata"))
	return append(allErrs, validateServiceGridSpec(&sg.Spec, field.NewPath("spec"))...)
}

// ValidateServiceGridUpdate validates a ServiceGrid on update.
func ValidateServiceGridUpdate(sg, old *topology.ServiceGrid) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&sg.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateServiceGridSpec(&sg.Spec, field.NewPath("spec"))...)
}

// ValidateServiceGridStatusUpdate validates a write to the status subresource.
func ValidateServiceGridStatusUpdate(sg, old *topology.ServiceGrid) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&sg.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	statusPath := field.NewPath("status")
	if sg.Status.ObservedGeneration < 0 {
		allErrs = append(allErrs, field.Invalid(statusPath.Child("observedGeneration"), sg.Status.ObservedGeneration, "must not be negative"))
	}
	if sg.Status.ServiceName != "" {
		for _, msg := range validation.IsDNS1035Label(sg.Status.ServiceName) {
			allErrs = append(allErrs, field.Invalid(statusPath.Child("serviceName"), sg.Status.ServiceName, msg))
		}
	}
	return append(allErrs, metav1validation.ValidateConditions(sg.Status.Conditions, statusPath.Child("conditions"))...)
}

func validateServiceGridSpec(spec *topology.ServiceGridSpec, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	keyPath := path.Child("gridUniqKey")
	if spec.GridUniqKey == "" {
		allErrs = append(allErrs, field.Required(keyPath, "the node label key that names a node's grid unit, e.g. superedge.io/nodeunit"))
	} else {
		for _, msg := range validation.IsQualifiedName(spec.GridUniqKey) {
			allErrs = append(allErrs, field.Invalid(keyPath, spec.GridUniqKey, msg))
		}
	}
	if !supportedFallbacks.Has(string(spec.Fallback)) {
		allErrs = append(allErrs, field.NotSupported(path.Child("fallback"), spec.Fallback, sets.List(supportedFallbacks)))
	}
	allErrs = append(allErrs, validateMinReady(spec, path.Child("minReady"))...)
	return append(allErrs, validateTemplate(&spec.Template, path.Child("template"))...)
}

// validateTemplate catches the mistakes that make a template useless as a
// Service. Every other rule of Services is kube-apiserver's to enforce when the
// Service is written.
func validateTemplate(tmpl *corev1.ServiceSpec, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	portsPath := path.Child("ports")
	if len(tmpl.Ports) == 0 {
		return append(allErrs, field.Required(portsPath, "a ServiceGrid routes traffic to at least one port"))
	}
	names := sets.New[string]()
	for i, port := range tmpl.Ports {
		portPath := portsPath.Index(i)
		if len(tmpl.Ports) > 1 && port.Name == "" {
			allErrs = append(allErrs, field.Required(portPath.Child("name"), "every port needs a name when there is more than one"))
		}
		if port.Name != "" {
			if names.Has(port.Name) {
				allErrs = append(allErrs, field.Duplicate(portPath.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(port.Port)) {
			allErrs = append(allErrs, field.Invalid(portPath.Child("port"), port.Port, msg))
		}
		if port.Protocol != "" && !supportedProtocols.Has(string(port.Protocol)) {
			allErrs = append(allErrs, field.NotSupported(portPath.Child("protocol"), port.Protocol, sets.List(supportedProtocols)))
		}
	}
	return allErrs
}
