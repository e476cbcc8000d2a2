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
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

// wrapperScheme holds the kinds the wrapper reads, serves and forwards, and
// nothing else: client-go's scheme, and the clientsets and informers built
// on it, hold every API group and would make the binary, most of a
// node-local process's memory, twice as large.
var wrapperScheme = runtime.NewScheme()

var (
	wrapperCodecs         = serializer.NewCodecFactory(wrapperScheme)
	wrapperParameterCodec = runtime.NewParameterCodec(wrapperScheme)
)

func init() {
	metav1.AddToGroupVersion(wrapperScheme, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(corev1.AddToScheme(wrapperScheme))
	utilruntime.Must(discoveryv1.AddToScheme(wrapperScheme))
	utilruntime.Must(networkingv1.AddToScheme(wrapperScheme))
	utilruntime.Must(eventsv1.AddToScheme(wrapperScheme))
	utilruntime.Must(topologyv1alpha1.AddToScheme(wrapperScheme))
}
