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

// Package embeddedetcd runs a single-member etcd inside gridview-apiserver, so
// that one binary serves ServiceGrids with nothing else to install.
package embeddedetcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

// Config says where the embedded etcd keeps its data and listens.
type Config struct {
	// DataDir holds the member's data; it survives restarts.
	DataDir string
	// ClientURL and PeerURL are loopback URLs on ports free when they were picked.
	ClientURL url.URL
	PeerURL   url.URL
}

// NewConfig picks free loopback ports for a member whose data lives in dataDir.
func NewConfig(dataDir string) (*Config, error) {
	clientPort, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	peerPort, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	return &Config{
		DataDir:   dataDir,
		ClientURL: url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))},
		PeerURL:   url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))},
	}, nil
}

// ValidateDataDir reports a data directory the member could not use, before
// anything starts, so the server fails with one clear line.
func ValidateDataDir(dir string) error {
	if dir == "" {
		return errors.New("--data-dir must not be empty when --etcd-servers is not set")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--data-dir %s cannot be created: %w", dir, err)
	}
	probe, err := os.CreateTemp(dir, ".gridview-write-check-*")
	if err != nil {
		return fmt.Errorf("--data-dir %s is not writable: %w", dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// Start runs the member and returns once it serves clients. The caller stops it
// with Close on the returned server.
func Start(ctx context.Context, cfg *Config) (*embed.Etcd, error) {
	ecfg := embed.NewConfig()
	ecfg.Name = "gridview"
	ecfg.Dir = cfg.DataDir
	ecfg.WalDir = filepath.Join(cfg.DataDir, "wal")
	ecfg.ListenClientUrls = []url.URL{cfg.ClientURL}
	ecfg.AdvertiseClientUrls = []url.URL{cfg.ClientURL}
	ecfg.ListenPeerUrls = []url.URL{cfg.PeerURL}
	ecfg.AdvertisePeerUrls = []url.URL{cfg.PeerURL}
	ecfg.InitialCluster = ecfg.InitialClusterFromName(ecfg.Name)
	// etcd's own logs are noisy at info; warnings and errors still show.
	ecfg.LogLevel = "warn"

	etcd, err := embed.StartEtcd(ecfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", cfg.DataDir, err)
	}
	select {
	case <-etcd.Server.ReadyNotify():
		klog.InfoS("Embedded etcd is ready", "dataDir", cfg.DataDir, "clientURL", cfg.ClientURL.String())
		return etcd, nil
	case err := <-etcd.Err():
		etcd.Close()
		return nil, fmt.Errorf("embedded etcd in %s failed: %w", cfg.DataDir, err)
	case <-time.After(time.Minute):
		etcd.Close()
		return nil, fmt.Errorf("embedded etcd in %s was not ready within a minute", cfg.DataDir)
	case <-ctx.Done():
		etcd.Close()
		return nil, ctx.Err()
	}
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port for the embedded etcd: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
