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
	"testing"
)

func TestMetricSample(t *testing.T) {
	const text = `# HELP reads_total Reads.
# TYPE reads_total counter
reads_total{served_by="follower"} 3
reads_total{served_by="leader"} 1.5e+06
reads_total_sum 9
leading 1
broken NaN-ish
`
	cases := []struct {
		name, sample string
		want         float64
		wantErr      error
		wantAnyErr   bool
	}{
		{name: "unlabelled", sample: "leading", want: 1},
		{name: "labelled", sample: `reads_total{served_by="follower"}`, want: 3},
		{name: "exponent", sample: `reads_total{served_by="leader"}`, want: 1.5e6},
		{name: "a longer name is another metric", sample: "reads_total", wantErr: ErrNoSample},
		{name: "labels never counted", sample: `reads_total{served_by="local"}`, wantErr: ErrNoSample},
		{name: "not a number", sample: "broken", wantAnyErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MetricSample(text, tc.sample)
			switch {
			case tc.wantErr != nil || tc.wantAnyErr:
				if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
					t.Fatalf("MetricSample(%s) = %v, %v; want error %v", tc.sample, got, err, tc.wantErr)
				}
			case err != nil || got != tc.want:
				t.Fatalf("MetricSample(%s) = %v, %v; want %v", tc.sample, got, err, tc.want)
			}
		})
	}
}
