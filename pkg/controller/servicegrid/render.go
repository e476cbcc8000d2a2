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

// Package servicegrid keeps the Service of every ServiceGrid equal to what the
// ServiceGrid asks for, named and marked exactly as SuperEdge's
// application-grid-controller does so that SuperEdge's tooling keeps working.
package servicegrid

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
	topologyvalidation "github.com/gridview/gridview/apis/topology/validation"
	"github.com/gridview/gridview/pkg/topology"
)

// The labels SuperEdge puts on a ServiceGrid's Service; its annotations are
// the topology annotations of package topology.
const (
	LabelGridSelector = "superedge.io/grid-selector"
	LabelGridUniqKey  = "superedge.io/grid-uniq-key"
)

// FieldManager owns the fields gridview sets on Services.
const FieldManager = "gridview-servicegrid-controller"

// AnnotationAdoptServiceUID holds the UID of the orphan Service that a write
// of the ServiceGrid was admitted against by a user who may update and patch
// it; the controller adopts that orphan only. gridview-apiserver alone sets
// it, at admission, replacing whatever the user sent.
const AnnotationAdoptServiceUID = "topology.gridview.io/adopt-service-uid"

// ServiceName is the name of the Service a ServiceGrid owns.
func ServiceName(serviceGridName string) string {
	return serviceGridName + topologyvalidation.ServiceNameSuffix
}

// DesiredService renders the Service a ServiceGrid owns as an apply
// configuration: applied by FieldManager, fields the ServiceGrid no longer
// sets are removed from the Service while fields of other managers stay.
func DesiredService(sg *v1alpha1.ServiceGrid) (*corev1apply.ServiceApplyConfiguration, error) {
	spec, err := serviceSpec(sg)
	if err != nil {
		return nil, err
	}
	// New maps: the ServiceGrid may come from an informer cache, which must
	// never be written to.
	labels := maps.Clone(sg.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelGridSelector] = sg.Name
	// A prefixed key such as superedge.io/nodeunit is no valid label value;
	// the topologyKeys annotation carries it in every case.
	if len(validation.IsValidLabelValue(sg.Spec.GridUniqKey)) == 0 {
		labels[LabelGridUniqKey] = sg.Spec.GridUniqKey
	}

	annotations := maps.Clone(sg.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	// kubectl's record of its last apply describes the ServiceGrid; copied
	// to the Service it would describe the wrong object.
	delete(annotations, corev1.LastAppliedConfigAnnotation)
	// A grant to gridview about one Service, which means nothing on it.
	delete(annotations, AnnotationAdoptServiceUID)
	keys, err := json.Marshal([]string{sg.Spec.GridUniqKey})
	if err != nil {
		return nil, err
	}
	annotations[topology.AnnotationTopologyKeys] = string(keys)
	if sg.Spec.Fallback == v1alpha1.FallbackAny {
		annotations[topology.AnnotationGridviewKeys] = sg.Spec.GridUniqKey + "," + topology.KeyAny
	}
	// Unset, a min-ready the user put on the ServiceGrid passes through as
	// its other annotations do; set, spec.minReady is the one that counts.
	if sg.Spec.MinReady != nil {
		annotations[topology.AnnotationMinReady] = minReady(sg.Spec.MinReady).String()
	}

	return corev1apply.Service(ServiceName(sg.Name), sg.Namespace).
		WithLabels(labels).
		WithAnnotations(annotations).
		WithOwnerReferences(metav1apply.OwnerReference().
			WithAPIVersion(v1alpha1.SchemeGroupVersion.String()).
			WithKind("ServiceGrid").
			WithName(sg.Name).
			WithUID(sg.UID).
			WithController(true).
			WithBlockOwnerDeletion(true)).
		WithSpec(spec), nil
}

// minReady is spec.minReady in the engine's terms, whose String is the
// annotation's canonical form.
func minReady(m *v1alpha1.MinReady) topology.MinReady {
	out := topology.MinReady{Default: ptr.Deref(m.Default, 0)}
	for _, entry := range m.PerKey {
		if out.PerKey == nil {
			out.PerKey = make(map[string]int32, len(m.PerKey))
		}
		out.PerKey[entry.Key] = entry.Count
	}
	return out
}

// serviceSpec converts the template into an apply configuration. Both share
// their JSON form, and the template's unset fields are omitted from it.
func serviceSpec(sg *v1alpha1.ServiceGrid) (*corev1apply.ServiceSpecApplyConfiguration, error) {
	data, err := json.Marshal(sg.Spec.Template)
	if err != nil {
		return nil, fmt.Errorf("encoding the template of ServiceGrid %s/%s: %w", sg.Namespace, sg.Name, err)
	}
	spec := &corev1apply.ServiceSpecApplyConfiguration{}
	if err := json.Unmarshal(data, spec); err != nil {
		return nil, fmt.Errorf("decoding the template of ServiceGrid %s/%s: %w", sg.Namespace, sg.Name, err)
	}
	// An unset targetPort encodes as 0; left in, gridview would own a value the
	// API server replaces with the port.
	for i := range spec.Ports {
		if tp := spec.Ports[i].TargetPort; tp != nil && *tp == (intstr.IntOrString{}) {
			spec.Ports[i].TargetPort = nil
		}
	}
	return spec, nil
}

// DesiredServiceObject renders the Service of DesiredService as an object, for
// the writes that are no apply: a dry-run create and an adoption.
func DesiredServiceObject(sg *v1alpha1.ServiceGrid) (*corev1.Service, error) {
	desired, err := DesiredService(sg)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(desired)
	if err != nil {
		return nil, fmt.Errorf("encoding the Service of ServiceGrid %s/%s: %w", sg.Namespace, sg.Name, err)
	}
	svc := &corev1.Service{}
	if err := json.Unmarshal(data, svc); err != nil {
		return nil, fmt.Errorf("decoding the Service of ServiceGrid %s/%s: %w", sg.Namespace, sg.Name, err)
	}
	return svc, nil
}

// Takeover renders the one write that adopts orphan for sg: a replacement
// holding nothing but the template and the marks, so that fields someone
// planted on the orphan (externalIPs, a service-proxy-name label, another
// type) do not ride along on a Service a user who may not write it gets
// through gridview. kube-apiserver keeps the allocated clusterIPs and node
// ports of a replacement that leaves them unset. The orphan's UID and
// resourceVersion make it a precondition: a Service changed since it was read
// is not taken over. managedFields [{}] resets ownership, so that no one who
// set a field of the orphan keeps it once the template drops it; see
// settleTakeover for the rest.
func Takeover(orphan *corev1.Service, sg *v1alpha1.ServiceGrid) (*corev1.Service, error) {
	svc, err := DesiredServiceObject(sg)
	if err != nil {
		return nil, err
	}
	svc.UID = orphan.UID
	svc.ResourceVersion = orphan.ResourceVersion
	svc.Finalizers = orphan.Finalizers
	svc.ManagedFields = []metav1.ManagedFieldsEntry{{}}
	return svc, nil
}
