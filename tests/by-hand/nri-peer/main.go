// nri-peer: a container runtime's side of NRI built from NRI's own code (its mux and its
// generated ttrpc API) and the real ttrpc library, to check hcashare-nri against by hand
// (tests/by-hand/nri-peer/README.txt). It listens on -socket, accepts one plugin, serves
// Runtime.RegisterPlugin, calls Plugin.Configure and Plugin.Synchronize (with the pod when
// -sync-pod), then sends the -events for the pod through StateChange, as runtimes with NRI
// v0.6 deliver pod events, printing one line per step.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/net/multiplex"
	"github.com/containerd/ttrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type runtime struct {
	registered chan *api.RegisterPluginRequest
}

func (r *runtime) RegisterPlugin(ctx context.Context, req *api.RegisterPluginRequest) (*api.Empty, error) {
	r.registered <- req
	return &api.Empty{}, nil
}

func (r *runtime) UpdateContainers(ctx context.Context, req *api.UpdateContainersRequest) (*api.UpdateContainersResponse, error) {
	return &api.UpdateContainersResponse{}, nil
}

func main() {
	socket := flag.String("socket", "/tmp/nri-peer.sock", "where to listen")
	config := flag.String("config", "", "Configure's config")
	events := flag.String("events", "run,stop,remove", "pod events to send")
	netns := flag.String("netns", "/var/run/netns/peer", "the pod's network namespace")
	syncPod := flag.Bool("sync-pod", false, "list the pod in Synchronize")
	dedicated := flag.Bool("dedicated", false,
		"send pod events as NRI >= v0.12 does: RunPodSandbox/StopPodSandbox/RemovePodSandbox, "+
			"falling back to StateChange on Unimplemented")
	flag.Parse()

	os.Remove(*socket)
	l, err := net.Listen("unix", *socket)
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	conn, err := l.Accept()
	if err != nil {
		fmt.Println("accept:", err)
		os.Exit(1)
	}
	mux := multiplex.Multiplex(conn, multiplex.WithBlockedRead())
	pconn, err := mux.Open(multiplex.PluginServiceConn)
	if err != nil {
		fmt.Println("mux open:", err)
		os.Exit(1)
	}
	client := ttrpc.NewClient(pconn)
	rpcl, err := mux.Listen(multiplex.RuntimeServiceConn)
	if err != nil {
		fmt.Println("mux listen:", err)
		os.Exit(1)
	}
	server, err := ttrpc.NewServer()
	if err != nil {
		fmt.Println("server:", err)
		os.Exit(1)
	}
	rt := &runtime{registered: make(chan *api.RegisterPluginRequest, 1)}
	api.RegisterRuntimeService(server, rt)
	go server.Serve(context.Background(), rpcl)
	mux.Unblock()

	select {
	case reg := <-rt.registered:
		fmt.Printf("registered name=%q idx=%q\n", reg.PluginName, reg.PluginIdx)
	case <-time.After(5 * time.Second):
		fmt.Println("no registration in 5 s")
		os.Exit(1)
	}
	plugin := api.NewPluginClient(client)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := plugin.Configure(ctx, &api.ConfigureRequest{
		Config: *config, RuntimeName: "nri-peer", RuntimeVersion: "v0.6.1",
	})
	if err != nil {
		fmt.Println("configure:", err)
		os.Exit(1)
	}
	fmt.Printf("configure events=0x%x\n", cfg.Events)
	pod := &api.PodSandbox{
		Id: "peer-sandbox-1", Name: "peer-pod", Uid: "peer-uid", Namespace: "peer-ns",
		Linux: &api.LinuxPodSandbox{Namespaces: []*api.LinuxNamespace{
			{Type: "ipc"}, {Type: "network", Path: *netns}}},
	}
	sync := &api.SynchronizeRequest{}
	if *syncPod {
		sync.Pods = []*api.PodSandbox{pod}
	}
	if _, err := plugin.Synchronize(ctx, sync); err != nil {
		fmt.Println("synchronize:", err)
		os.Exit(1)
	}
	fmt.Println("synchronize ok")
	for _, e := range strings.Split(*events, ",") {
		ev := map[string]api.Event{"run": api.Event_RUN_POD_SANDBOX, "stop": api.Event_STOP_POD_SANDBOX,
			"remove": api.Event_REMOVE_POD_SANDBOX}[e]
		if cfg.Events&(1<<(ev-1)) == 0 {
			fmt.Printf("%s not subscribed\n", e)
			continue
		}
		var err error
		how := ""
		if *dedicated {
			// v0.6.1's API has no RunPodSandboxRequest; CreateContainerRequest carries the pod in
			// field 1 as RunPodSandboxRequest (and Stop/Remove) do, so the bytes are the same.
			method := map[string]string{"run": "RunPodSandbox", "stop": "StopPodSandbox",
				"remove": "RemovePodSandbox"}[e]
			var out api.Empty
			err = client.Call(ctx, "nri.pkg.api.v1alpha1.Plugin", method,
				&api.CreateContainerRequest{Pod: pod}, &out)
			how = method + " "
		}
		if !*dedicated || status.Code(err) == codes.Unimplemented {
			_, err = plugin.StateChange(ctx, &api.StateChangeEvent{Event: ev, Pod: pod})
			how += "StateChange"
		}
		fmt.Printf("(%s) ", how)
		if err != nil {
			fmt.Printf("%s error: %v\n", e, err)
		} else {
			fmt.Printf("%s ok\n", e)
		}
	}
	// An unknown method (a newer runtime's dedicated RPC): the plugin must answer Unimplemented.
	var out api.Empty
	err = client.Call(ctx, "nri.pkg.api.v1alpha1.Plugin", "NoSuchMethod", &api.Empty{}, &out)
	fmt.Printf("unknown method: %v\n", err)
	client.Close()
	conn.Close()
}
