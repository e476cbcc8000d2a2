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

package server

import (
	"crypto/tls"
	"fmt"
	"os"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// newEtcdClient reaches gridview's etcd as its storage of ServiceGrids does,
// for the input log and the election of its writer.
func newEtcdClient(t storagebackend.TransportConfig) (*clientv3.Client, error) {
	var tlsConfig *tls.Config
	if t.CertFile != "" || t.KeyFile != "" || t.TrustedCAFile != "" {
		info := transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile}
		var err error
		if tlsConfig, err = info.ClientConfig(); err != nil {
			return nil, fmt.Errorf("reading the etcd client's certificates: %w", err)
		}
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints: t.ServerList, TLS: tlsConfig,
		DialTimeout: 20 * time.Second, DialKeepAliveTime: 30 * time.Second, DialKeepAliveTimeout: 10 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %v: %w", t.ServerList, err)
	}
	return client, nil
}

// identity names this process in the election of the log's writer: its
// host (a Pod's name) and a UID, so that a process restarted in place is
// another candidate.
func identity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("naming this replica: %w", err)
	}
	return host + "_" + string(uuid.NewUUID()), nil
}
