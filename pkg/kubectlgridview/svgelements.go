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

import "encoding/xml"

// The SVG elements the map uses; encoding/xml escapes every label.
type (
	svgDoc struct {
		XMLName  xml.Name `xml:"svg"`
		Xmlns    string   `xml:"xmlns,attr"`
		Width    int      `xml:"width,attr"`
		Height   int      `xml:"height,attr"`
		ViewBox  string   `xml:"viewBox,attr"`
		Font     string   `xml:"font-family,attr"`
		Title    string   `xml:"title"`
		Elements []any
	}
	svgGroup struct {
		XMLName  xml.Name `xml:"g"`
		Class    string   `xml:"class,attr"`
		Route    string   `xml:"data-route,attr,omitempty"`
		Title    string   `xml:"title,omitempty"`
		Elements []any
	}
	svgRect struct {
		XMLName     xml.Name `xml:"rect"`
		X           int      `xml:"x,attr"`
		Y           int      `xml:"y,attr"`
		Width       int      `xml:"width,attr"`
		Height      int      `xml:"height,attr"`
		Rx          int      `xml:"rx,attr"`
		Fill        string   `xml:"fill,attr"`
		Stroke      string   `xml:"stroke,attr"`
		StrokeWidth int      `xml:"stroke-width,attr"`
	}
	svgText struct {
		XMLName xml.Name `xml:"text"`
		X       int      `xml:"x,attr"`
		Y       int      `xml:"y,attr"`
		Size    int      `xml:"font-size,attr"`
		Weight  string   `xml:"font-weight,attr,omitempty"`
		Text    string   `xml:",chardata"`
	}
	svgPolyline struct {
		XMLName xml.Name `xml:"polyline"`
		Class   string   `xml:"class,attr"`
		Points  string   `xml:"points,attr"`
		Fill    string   `xml:"fill,attr"`
		Stroke  string   `xml:"stroke,attr"`
		Dash    string   `xml:"stroke-dasharray,attr"`
	}
)
