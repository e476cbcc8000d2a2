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
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	topologyv1alpha1 "github.com/gridview/gridview/apis/topology/v1alpha1"
)

// fakeUpstream answers the wrapper's informers as kube-apiserver and
// gridview-apiserver do, from fixed objects: lists, and streaming lists
// (ADDED events, then the bookmark ending them) that then stay open. It
// answers in protobuf when asked and the kind has it, else JSON, and counts
// the bytes it sends.
// upstreamRV is the resourceVersion of everything the fake serves.
const upstreamRV = 5_000_000

type fakeUpstream struct {
	objectsAt func(path string) []runtime.Object
	codecs    serializer.CodecFactory
	sent      atomic.Int64
	// protobuf counts the responses sent in protobuf.
	protobuf atomic.Int64
	// mediaTypes are the media types answered, by resource.
	mediaTypes sync.Map
}

func newFakeUpstream(objectsAt func(path string) []runtime.Object) *fakeUpstream {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(topologyv1alpha1.AddToScheme(scheme))
	return &fakeUpstream{objectsAt: objectsAt, codecs: serializer.NewCodecFactory(scheme)}
}

// collections are the lists the wrapper reads, by the last part of a path.
var collections = map[string]*kind{
	"services":       services,
	"nodes":          nodes,
	"endpoints":      endpoints,
	"endpointslices": endpointSlices,
	"servicecidrs":   serviceCIDRs,
	"nodeendpoints": {
		gvr:       topologyv1alpha1.SchemeGroupVersion.WithResource("nodeendpoints"),
		newObject: func() runtime.Object { return &topologyv1alpha1.NodeEndpoints{} },
		newList:   func() runtime.Object { return &topologyv1alpha1.NodeEndpointsList{} },
	},
}

func (f *fakeUpstream) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	path := req.URL.Path
	c, ok := collections[path[strings.LastIndexByte(path, '/')+1:]]
	if !ok {
		http.NotFound(w, req)
		return
	}
	objects := f.objectsAt(path)
	info := f.mediaType(req, c.newList())
	f.mediaTypes.Store(c.gvr.Resource, info.MediaType)
	gv := c.gvr.GroupVersion()
	w = countedWriter{ResponseWriter: w, sent: &f.sent}
	query := req.URL.Query()
	if query.Get("watch") != "true" {
		list, err := c.list(objects, upstreamRV)
		utilruntime.Must(err)
		w.Header().Set("Content-Type", info.MediaType)
		_ = f.codecs.EncoderForVersion(info.Serializer, gv).Encode(list, w)
		return
	}
	w.Header().Set("Content-Type", info.MediaType+";stream=watch")
	w.WriteHeader(http.StatusOK)
	frames := info.StreamSerializer.NewFrameWriter(w)
	embedded := f.codecs.EncoderForVersion(info.Serializer, gv)
	envelope := f.codecs.EncoderForVersion(info.StreamSerializer.Serializer, gv)
	send := func(eventType string, obj runtime.Object) {
		raw, err := runtime.Encode(embedded, obj)
		utilruntime.Must(err)
		utilruntime.Must(envelope.Encode(&metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Raw: raw}}, frames))
	}
	if query.Get("sendInitialEvents") == "true" {
		for _, obj := range objects {
			send("ADDED", shallowCopy(obj))
		}
		send("BOOKMARK", c.bookmark(upstreamRV, true))
	}
	if flusher, ok := w.(http.Flusher); ok {
		flusher.Flush()
	}
	<-req.Context().Done()
}

// mediaType is protobuf when the client accepts it and the kind has it.
func (f *fakeUpstream) mediaType(req *http.Request, list runtime.Object) runtime.SerializerInfo {
	_, marshals := list.(interface{ Marshal() ([]byte, error) })
	want := runtime.ContentTypeJSON
	if marshals && strings.Contains(req.Header.Get("Accept"), runtime.ContentTypeProtobuf) {
		want = runtime.ContentTypeProtobuf
		f.protobuf.Add(1)
	}
	info, _ := runtime.SerializerInfoForMediaType(f.codecs.SupportedMediaTypes(), want)
	return info
}

type countedWriter struct {
	http.ResponseWriter
	sent *atomic.Int64
}

func (c countedWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.sent.Add(int64(n))
	return n, err
}

func (c countedWriter) Flush() {
	if flusher, ok := c.ResponseWriter.(http.Flusher); ok {
		flusher.Flush()
	}
}
