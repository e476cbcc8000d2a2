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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// SuperEdge's ServiceGrid, read through the dynamic client: the plugin does
// not import SuperEdge's module for one small type.
var superedgeResource = schema.GroupVersionResource{Group: "superedge.io", Version: "v1", Resource: "servicegrids"}

const superedgeVersion = "superedge.io/v1"

// superedgeGrid is what the migration needs of a SuperEdge ServiceGrid.
type superedgeGrid struct {
	namespace, name string
	uid             types.UID
	deleting        bool
	labels          map[string]string
	gridUniqKey     string
	template        corev1.ServiceSpec
	// templateErr says why the template is not a core/v1 ServiceSpec today.
	templateErr error
}

// list returns the SuperEdge ServiceGrids of namespace (all when empty),
// sorted, so that runs print alike.
func (mg *migrator) list(ctx context.Context, namespace string) ([]*superedgeGrid, error) {
	list, err := mg.superedge.Resource(superedgeResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	grids := make([]*superedgeGrid, 0, len(list.Items))
	for i := range list.Items {
		grids = append(grids, readSuperEdgeGrid(&list.Items[i]))
	}
	slices.SortFunc(grids, func(a, b *superedgeGrid) int {
		return strings.Compare(a.namespace+"/"+a.name, b.namespace+"/"+b.name)
	})
	return grids, nil
}

func readSuperEdgeGrid(obj *unstructured.Unstructured) *superedgeGrid {
	grid := &superedgeGrid{
		namespace: obj.GetNamespace(),
		name:      obj.GetName(),
		uid:       obj.GetUID(),
		deleting:  obj.GetDeletionTimestamp() != nil,
		labels:    obj.GetLabels(),
	}
	grid.gridUniqKey, _, _ = unstructured.NestedString(obj.Object, "spec", "gridUniqKey")
	template, _, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", "template")
	if err == nil {
		grid.templateErr = decodeTemplate(template, &grid.template)
	} else {
		grid.templateErr = err
	}
	return grid
}

// decodeTemplate reads SuperEdge's template as a core/v1 ServiceSpec,
// refusing the fields today's ServiceSpec lacks: SuperEdge's schema dates
// from Kubernetes 1.20 and still has topologyKeys, removed in 1.22, which
// gridview would silently drop.
func decodeTemplate(template any, spec *corev1.ServiceSpec) error {
	if template == nil {
		return fmt.Errorf("spec.template is empty")
	}
	data, err := json.Marshal(template)
	if err != nil {
		return err
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(spec); err != nil {
		return fmt.Errorf("spec.template is not a core/v1 ServiceSpec of today's Kubernetes: %w", err)
	}
	return nil
}

// ownedBySuperEdge says whether ref names the SuperEdge ServiceGrid grid.
func ownedBySuperEdge(ref metav1.OwnerReference, grid *superedgeGrid) bool {
	return ref.UID == grid.uid
}
