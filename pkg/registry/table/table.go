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

// Package table builds the server-side tables kubectl prints.
package table

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apiserver/pkg/registry/rest"
)

// RowFunc returns the cells of one object's row, in column order.
type RowFunc[T runtime.Object] func(obj T) []interface{}

// Convertor turns objects of type T, or lists of them, into tables.
type Convertor[T runtime.Object] struct {
	Columns []metav1.TableColumnDefinition
	Row     RowFunc[T]
}

var _ rest.TableConvertor = Convertor[runtime.Object]{}

// ConvertToTable implements rest.TableConvertor.
func (c Convertor[T]) ConvertToTable(_ context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	addRow := func(item runtime.Object) error {
		typed, ok := item.(T)
		if !ok {
			var want T
			return fmt.Errorf("cannot print %T in a table of %T", item, want)
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: c.Row(typed), Object: runtime.RawExtension{Object: item}})
		return nil
	}
	if meta.IsListType(obj) {
		if err := meta.EachListItem(obj, addRow); err != nil {
			return nil, err
		}
		list, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, err
		}
		table.ResourceVersion = list.GetResourceVersion()
		table.Continue = list.GetContinue()
		table.RemainingItemCount = list.GetRemainingItemCount()
	} else {
		if err := addRow(obj); err != nil {
			return nil, err
		}
		if accessor, err := meta.Accessor(obj); err == nil {
			table.ResourceVersion = accessor.GetResourceVersion()
		}
	}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = c.Columns
	}
	return table, nil
}

// NameColumn is the first column of every table.
var NameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: "Name of the object."}

// AgeColumn is the last column of every table.
var AgeColumn = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: "Time since the object was created."}

// Age prints a creation timestamp the way kubectl does.
func Age(created metav1.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(created.Time))
}
