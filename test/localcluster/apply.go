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
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// applier server-side applies unstructured objects, resolving kinds through
// discovery so any served kind works, aggregated ones included.
type applier struct {
	dynamic      dynamic.Interface
	mapper       *restmapper.DeferredDiscoveryRESTMapper
	fieldManager string
}

func newApplier(cfg *rest.Config, fieldManager string) (*applier, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &applier{dynamic: dyn, mapper: mapper, fieldManager: fieldManager}, nil
}

// ApplyFile server-side applies every object of a multi-document YAML (or
// JSON) file with the given field manager, forcing ownership, so applying
// the same file again is harmless. Objects without a namespace that need
// one go to "default".
func ApplyFile(ctx context.Context, cfg *rest.Config, path, fieldManager string) error {
	a, err := newApplier(cfg, fieldManager)
	if err != nil {
		return err
	}
	return a.applyFile(ctx, path)
}

func (a *applier) applyFile(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading manifests: %w", err)
	}
	objects, err := decodeManifests(data)
	if err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	for _, obj := range objects {
		if err := a.apply(ctx, obj); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// decodeManifests splits a multi-document YAML stream into objects,
// skipping documents that hold only comments.
func decodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", len(objects)+1, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if obj.GetKind() == "" || obj.GetAPIVersion() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("document %d: apiVersion, kind and metadata.name are required", len(objects)+1)
		}
		objects = append(objects, obj)
	}
}

func (a *applier) apply(ctx context.Context, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		// The kind may have been registered (an APIService turning
		// Available) after discovery was cached.
		a.mapper.Reset()
		mapping, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return fmt.Errorf("applying %s %s: kind is not served: %w", gvk.Kind, obj.GetName(), err)
	}
	var resource dynamic.ResourceInterface = a.dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(metav1.NamespaceDefault)
		}
		resource = a.dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	_, err = resource.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: a.fieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", gvk.Kind, describe(obj), err)
	}
	return nil
}

func describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
