// hcashare-cni: the CNI plugin binary (cni/plugin_main.h).
#include "cni/plugin_main.h"

int main() { return hcashare::cni::RunPlugin(hcashare::cni::NetlinkBackends()); }
