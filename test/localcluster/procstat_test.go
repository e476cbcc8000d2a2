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
	"os"
	"testing"
)

func TestReadProcStatOfSelf(t *testing.T) {
	// Touch memory and burn a little CPU so both figures are non-zero.
	buf := make([]byte, 8<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	st, err := ReadProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.RSS < 8<<20 || st.PeakRSS < st.RSS {
		t.Errorf("RSS %d, peak %d: want RSS ≥ 8 MiB and peak ≥ RSS", st.RSS, st.PeakRSS)
	}
	if st.CPU < 0 {
		t.Errorf("CPU %v < 0", st.CPU)
	}
	_ = buf[len(buf)-1]
}

func TestParseKiB(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "\t  1234 kB", want: 1234 * 1024},
		{in: " 0 kB", want: 0},
		{in: " many kB", wantErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseKiB(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseKiB(%q) = %d, %v; want %d (error %v)", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
