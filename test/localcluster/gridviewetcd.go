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
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// startGridviewEtcd runs the etcd of Options.ExternalGridviewEtcd. It
// listens on the host end of the cluster's veth pair, not on loopback:
// gridview-apiserver runs in network namespaces whose 127.0.0.1 is their own,
// and every namespace reaches the host's addresses through its default route.
func (c *Cluster) startGridviewEtcd(ctx context.Context) error {
	return retryOnPortClash(func() (*Process, error) {
		e, err := newEtcdInstance("gridview-etcd", "gridview", c.HostIP.String(), filepath.Join(c.opts.WorkDir, "gridview-etcd"))
		if err != nil {
			return nil, err
		}
		c.GridviewEtcdURL = e.clientURL
		c.gridviewEtcdInstance = e
		return c.runEtcd(ctx, e, func(p *Process) { c.gridviewEtcd = p })
	})
}

// StopGridviewEtcd stops gridview-apiserver's external etcd (SIGTERM) and
// waits until it has exited; its data is kept for StartGridviewEtcd.
// kube-apiserver's etcd is another process and keeps running.
func (c *Cluster) StopGridviewEtcd() error {
	c.mu.Lock()
	proc := c.gridviewEtcd
	c.gridviewEtcd = nil
	c.mu.Unlock()
	if c.gridviewEtcdInstance == nil {
		return errors.New("gridview-apiserver uses its embedded etcd: start the cluster with Options.ExternalGridviewEtcd")
	}
	if proc == nil {
		return nil
	}
	if err := proc.Stop(); err != nil {
		return fmt.Errorf("stopping gridview-etcd: %w", err)
	}
	return nil
}

// StartGridviewEtcd starts gridview-apiserver's external etcd again on the
// same address and data, and waits until it is healthy.
func (c *Cluster) StartGridviewEtcd(ctx context.Context) error {
	c.mu.Lock()
	running := c.gridviewEtcd != nil
	c.mu.Unlock()
	switch {
	case c.gridviewEtcdInstance == nil:
		return errors.New("gridview-apiserver uses its embedded etcd: start the cluster with Options.ExternalGridviewEtcd")
	case running:
		return errors.New("gridview-etcd is already running: call StopGridviewEtcd first")
	}
	_, err := c.runEtcd(ctx, c.gridviewEtcdInstance, func(p *Process) { c.gridviewEtcd = p })
	return err
}
