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
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNoSample is a metric without the sample asked for: a vector serves a
// sample only once it counted something with those labels.
var ErrNoSample = errors.New("no sample")

// MetricSample reads one sample of a /metrics text, named with its labels as
// the text prints them: `name` or `name{label="value"}`.
func MetricSample(text, sample string) (float64, error) {
	for line := range strings.Lines(text) {
		if value, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				return 0, fmt.Errorf("sample %s: %w", sample, err)
			}
			return f, nil
		}
	}
	return 0, fmt.Errorf("%w of %s", ErrNoSample, sample)
}
