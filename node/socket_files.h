// Identity checks for the socket files in the kubelet's directories. These live outside
// /sys, /dev and /proc (under --kubelet-root-dir), so they do not go through the Host seam.
#pragma once

#include <sys/types.h>

#include <string>

namespace hcashare::node {

// The inode at `path` (the link itself, not its target), or 0 when absent.
ino_t InodeOf(const std::string& path);

// True when `path` is an existing directory.
bool IsDir(const std::string& path);

}  // namespace hcashare::node
