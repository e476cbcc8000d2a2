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

import "k8s.io/client-go/rest"

// GridviewConfig is a client config that talks to gridview-apiserver
// directly, bypassing the aggregator, with the admin's credentials: for the
// endpoints kube-apiserver does not proxy (/readyz, /livez, /metrics). With
// more replicas, it reaches the cluster's own; GridviewReplica.Config reaches
// any.
func (c *Cluster) GridviewConfig() *rest.Config {
	return c.primary().Config()
}
