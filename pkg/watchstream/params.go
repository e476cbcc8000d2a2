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

package watchstream

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DecodeListOptions reads the query of a list or watch as kube-apiserver
// does, but every bad value is a 400 that names its parameter: the decoder
// alone says only `strconv.ParseInt: parsing "abc"`, which leaves a client
// guessing which of its parameters is wrong. A negative timeoutSeconds or
// limit is refused too, instead of ending a watch at once or being read as
// "no limit".
func DecodeListOptions(query url.Values) (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := decodeParameters(query, opts); err != nil {
		// Decode again one parameter at a time to name the culprit.
		for _, name := range slices.Sorted(maps.Keys(query)) {
			if err := decodeParameters(url.Values{name: query[name]}, &metainternalversion.ListOptions{}); err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: invalid value %.64q: %v", name, strings.Join(query[name], ","), err))
			}
		}
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds < 0 {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("timeoutSeconds: invalid value %d: must not be negative", *opts.TimeoutSeconds))
	}
	if opts.Limit < 0 {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("limit: invalid value %d: must not be negative", opts.Limit))
	}
	return opts, nil
}

func decodeParameters(query url.Values, opts *metainternalversion.ListOptions) error {
	return metainternalversionscheme.ParameterCodec.DecodeParameters(query, metav1.SchemeGroupVersion, opts)
}
