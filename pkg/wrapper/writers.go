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
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/klog/v2"
)

// The wrapper answers as kube-apiserver's handlers do (responsewriters),
// written here for the little it needs: linking those handlers would link
// the whole API server into a node-local process, whose binary's pages are
// most of its memory.

// writeObject encodes obj in the media type the request negotiates; a
// request accepting none of them gets 406, unless obj is an error's status,
// which is then written as JSON.
func writeObject(codecs runtime.NegotiatedSerializer, gv schema.GroupVersion, w http.ResponseWriter, req *http.Request, code int, obj runtime.Object) {
	_, info, err := negotiation.NegotiateOutputMediaType(req, codecs, negotiation.DefaultEndpointRestrictions)
	if err != nil {
		if code < http.StatusOK || code >= http.StatusBadRequest {
			writeRawJSON(w, code, obj)
			return
		}
		status := statusOf(err)
		writeRawJSON(w, int(status.Code), status)
		return
	}
	w.Header().Set("Content-Type", info.MediaType)
	w.WriteHeader(code)
	if err := codecs.EncoderForVersion(info.Serializer, gv).Encode(obj, w); err != nil {
		klog.V(2).InfoS("Cannot write a response", "path", req.URL.Path, "err", err)
	}
}

// writeError writes err as a Status, with Retry-After when it says when to
// retry.
func writeError(codecs runtime.NegotiatedSerializer, w http.ResponseWriter, req *http.Request, err error) {
	status := statusOf(err)
	if status.Details != nil && status.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(status.Details.RetryAfterSeconds)))
	}
	writeObject(codecs, metav1.SchemeGroupVersion, w, req, int(status.Code), status)
}

// statusOf is an error's Status: its own for an API error, an internal
// error's for any other.
func statusOf(err error) *metav1.Status {
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		status := apiStatus.Status()
		if status.Code == 0 {
			status.Code = http.StatusInternalServerError
		}
		status.Kind, status.APIVersion = "Status", "v1"
		return &status
	}
	status := apierrors.NewInternalError(err).Status()
	status.Kind, status.APIVersion = "Status", "v1"
	return &status
}

func writeRawJSON(w http.ResponseWriter, code int, obj any) {
	data, err := json.Marshal(obj)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.WriteHeader(code)
	_, _ = w.Write(data)
}
