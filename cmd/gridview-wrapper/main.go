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

// Command gridview-wrapper serves kube-proxy this node's view of the cluster.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/gridview/gridview/pkg/cmd/wrapper"
)

func main() {
	ctx := signalContext()
	err := wrapper.NewCommand(ctx).Execute()
	klog.Flush()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gridview-wrapper: %v\n", err)
		os.Exit(1)
	}
}

// signalContext ends at the first SIGTERM or SIGINT, so the wrapper saves
// its cache and stops; a second one exits at once. It is what
// k8s.io/apiserver's SetupSignalContext does, without linking the API
// server's packages: a node-local process keeps its binary, and the pages
// of it that it touches, small.
func signalContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-signals
		cancel()
		<-signals
		os.Exit(1)
	}()
	return ctx
}
