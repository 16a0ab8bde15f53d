// ACS P2P redirect on the path between a GPU and an RDMA NIC under one PCIe switch.
//
// A switch port whose ACS Control register has P2P Request Redirect (RR, 0x04), P2P
// Completion Redirect (CR, 0x08) or P2P Egress Control (EC, 0x20) set sends peer-to-peer
// TLPs up to the root complex instead of across the switch: GPUDirect between a GPU and a
// NIC "one switch apart" (PIX, PXB) then crosses the root complex anyway. Linux sets RR and
// CR on every port that has them when an IOMMU driver asks for ACS; pci=disable_acs_redir=
// clears exactly RR, CR and EC. Reading the register needs CAP_SYS_ADMIN in the initial user
// namespace (hostfacts::ParseAcsCtrl). Pure functions of the endpoints.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topo/endpoints.h"

namespace hcashare::topo {

// The ACS Control bits that send P2P traffic to the root complex: RR | CR | EC.
inline constexpr int kAcsRedirectBits = 0x04 | 0x08 | 0x20;

// What ACS does to the path between two devices.
enum class AcsState {
  kNotApplicable,  // they share no PCIe switch: the path crosses the root complex anyway
  kOff,            // no bridge between them redirects (or has ACS)
  kRedirect,       // a bridge between them redirects P2P to the root complex
  kUnknown,        // none is known to redirect, but one's ACS could not be read
};

// "n/a", "off", "redirect" or "unknown".
const char* AcsStateName(AcsState state);

// True when a bridge's ACS Control value (hostfacts::PciFunction::acs_ctrl) redirects.
bool AcsRedirects(int acs_ctrl);

// ACS on the path between one GPU and one RDMA NIC.
struct AcsPath {
  std::string gpu;       // PCI address
  std::string nic;       // PCI address
  std::string nic_name;  // its first RDMA device
  AcsState state = AcsState::kNotApplicable;
  std::vector<std::string> bridges;      // between them, below their lowest common bridge
  std::vector<std::string> redirecting;  // of `bridges`, those that redirect
  std::vector<std::string> unreadable;   // of `bridges`, those whose ACS is unknown
};

// The bridges between `a` and `b` below their lowest common bridge (the switch ports they
// hang off, and any nested switch's), from `a`'s side to `b`'s. nullopt when they share no
// bridge, i.e. their path goes through a root complex.
std::optional<std::vector<std::string>> BridgesBetween(const PciEndpoint& a, const PciEndpoint& b);

// ACS on the path between `gpu` and `nic`, by the bridges' ACS in `eps.bridge_acs`.
AcsPath AcsBetween(const Endpoints& eps, const PciEndpoint& gpu, const PciEndpoint& nic);

// Every GPU and RDMA NIC pair of `eps` that shares a PCIe switch, in GPU then NIC order.
std::vector<AcsPath> AcsPaths(const Endpoints& eps);

}  // namespace hcashare::topo
