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
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/gridview/gridview/apis/topology/v1alpha1"
)

// printObject prints obj, of kind, as yaml or json: the typed clients
// return objects without apiVersion and kind, which the printers require.
func printObject(obj runtime.Object, kind, format string, out io.Writer) error {
	printer, err := genericclioptions.NewJSONYamlPrintFlags().ToPrinter(format)
	if err != nil {
		return err
	}
	obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(kind))
	return printer.PrintObj(obj, out)
}

// tierName is how a tier reads: key=value, "*" for every endpoint, and
// key=<none> for a node without the label.
func tierName(key, value string) string {
	switch {
	case key == "*":
		return "*"
	case value == "":
		return key + "=<none>"
	}
	return key + "=" + value
}
