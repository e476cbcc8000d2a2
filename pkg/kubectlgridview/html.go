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
	"fmt"
	"html"
	"io"
	"strings"
)

// writeHTML writes one self-contained page around the SVG: no script,
// stylesheet or image is fetched, so the file can be mailed or attached.
func writeHTML(w io.Writer, m routeMap) error {
	var svg strings.Builder
	if err := writeSVG(&svg, m); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s</title>
<style>body { font-family: sans-serif; margin: 16px; } svg { max-width: 100%%; height: auto; }</style>
</head>
<body>
<p>Hover a cell for its labels, sample nodes and tier.</p>
%s</body>
</html>
`, html.EscapeString(m.title), svg.String())
	return err
}
