// The real Verbs: rdma-core's libibverbs, loaded with dlopen().
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstddef>

#include "doctor/verbs.h"

namespace hcashare::doctor {
namespace {

constexpr const char* kLibrary = "libibverbs.so.1";

struct PortStateName {
  ibv_port_state state;
  const char* name;
};
constexpr PortStateName kPortStates[] = {
    {IBV_PORT_NOP, "NOP"},     {IBV_PORT_DOWN, "DOWN"},     {IBV_PORT_INIT, "INIT"},
    {IBV_PORT_ARMED, "ARMED"}, {IBV_PORT_ACTIVE, "ACTIVE"}, {IBV_PORT_ACTIVE_DEFER, "ACTIVE_DEFER"},
};

std::string PortStateText(ibv_port_state s) {
  for (const auto& p : kPortStates) {
    if (p.state == s) return p.name;
  }
  return "UNKNOWN(" + std::to_string(static_cast<int>(s)) + ")";
}

class Libibverbs final : public Verbs {
 public:
  Status Load() override {
    if (handle_ != nullptr) return Status::Ok();
    void* h = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* why = ::dlerror();
      return Status::FailedPrecondition(std::string("cannot load ") + kLibrary + ": " +
                                        (why != nullptr ? why : "unknown error"));
    }
    RETURN_IF_ERROR(Bind(h, "ibv_get_device_list", &get_list_));
    RETURN_IF_ERROR(Bind(h, "ibv_free_device_list", &free_list_));
    RETURN_IF_ERROR(Bind(h, "ibv_get_device_name", &get_name_));
    RETURN_IF_ERROR(Bind(h, "ibv_open_device", &open_));
    RETURN_IF_ERROR(Bind(h, "ibv_close_device", &close_));
    RETURN_IF_ERROR(Bind(h, "ibv_query_device", &query_device_));
    RETURN_IF_ERROR(Bind(h, "ibv_query_port", &query_port_compat_));
    handle_ = h;  // never dlclose()d: providers register destructors inside it
    return Status::Ok();
  }

  Result<std::vector<std::string>> ListDevices() override {
    ASSIGN_OR_RETURN(DeviceList list, GetList());
    std::vector<std::string> names;
    for (int i = 0; i < list.count; ++i) names.push_back(get_name_(list.devices[i]));
    return names;
  }

  Result<std::vector<VerbsPort>> QueryPorts(const std::string& name) override {
    ASSIGN_OR_RETURN(DeviceList list, GetList());
    ibv_device* dev = nullptr;
    for (int i = 0; i < list.count && dev == nullptr; ++i) {
      if (name == get_name_(list.devices[i])) dev = list.devices[i];
    }
    if (dev == nullptr) return Status::NotFound("ibv_get_device_list does not list " + name);
    ibv_context* ctx = open_(dev);
    if (ctx == nullptr) return ErrnoStatus(errno, "ibv_open_device(" + name + ")");
    auto result = QueryOpen(ctx, name);
    close_(ctx);
    return result;
  }

 private:
  // A device list that frees itself.
  struct DeviceList {
    ibv_device** devices = nullptr;
    int count = 0;
    void (*free_list)(ibv_device**) = nullptr;
    DeviceList() = default;
    DeviceList(DeviceList&& o) noexcept { *this = std::move(o); }
    DeviceList& operator=(DeviceList&& o) noexcept {
      std::swap(devices, o.devices);
      std::swap(count, o.count);
      std::swap(free_list, o.free_list);
      return *this;
    }
    ~DeviceList() {
      if (devices != nullptr) free_list(devices);
    }
  };

  template <typename Fn>
  static Status Bind(void* handle, const char* symbol, Fn* out) {
    void* p = ::dlsym(handle, symbol);
    if (p == nullptr) {
      return Status::FailedPrecondition(std::string(kLibrary) + " has no symbol " + symbol);
    }
    *out = reinterpret_cast<Fn>(p);
    return Status::Ok();
  }

  Result<DeviceList> GetList() {
    RETURN_IF_ERROR(Load());
    DeviceList list;
    errno = 0;
    list.devices = get_list_(&list.count);
    if (list.devices == nullptr)
      return ErrnoStatus(errno != 0 ? errno : EIO, "ibv_get_device_list failed");
    list.free_list = free_list_;
    return list;
  }

  // ibv_query_port() as verbs.h's inline wrapper does it: the provider's extended entry
  // point when it has one, else the library's compatibility symbol.
  int QueryPort(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
    *attr = ibv_port_attr{};
    verbs_context* vctx = verbs_get_ctx_op(ctx, query_port);
    if (vctx != nullptr) return vctx->query_port(ctx, port, attr, sizeof(*attr));
    return query_port_compat_(ctx, port, reinterpret_cast<_compat_ibv_port_attr*>(attr));
  }

  Result<std::vector<VerbsPort>> QueryOpen(ibv_context* ctx, const std::string& name) {
    ibv_device_attr dev_attr{};
    if (int rc = query_device_(ctx, &dev_attr); rc != 0) {
      return ErrnoStatus(rc, "ibv_query_device(" + name + ")");
    }
    std::vector<VerbsPort> ports;
    for (int p = 1; p <= dev_attr.phys_port_cnt; ++p) {
      ibv_port_attr attr;
      if (int rc = QueryPort(ctx, static_cast<uint8_t>(p), &attr); rc != 0) {
        return ErrnoStatus(rc, "ibv_query_port(" + name + ", " + std::to_string(p) + ")");
      }
      VerbsPort port;
      port.number = p;
      port.state = PortStateText(attr.state);
      port.link_layer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
      ports.push_back(port);
    }
    return ports;
  }

  void* handle_ = nullptr;
  ibv_device** (*get_list_)(int*) = nullptr;
  void (*free_list_)(ibv_device**) = nullptr;
  const char* (*get_name_)(ibv_device*) = nullptr;
  ibv_context* (*open_)(ibv_device*) = nullptr;
  int (*close_)(ibv_context*) = nullptr;
  int (*query_device_)(ibv_context*, ibv_device_attr*) = nullptr;
  int (*query_port_compat_)(ibv_context*, uint8_t, _compat_ibv_port_attr*) = nullptr;
};

}  // namespace

std::unique_ptr<Verbs> NewLibibverbs() { return std::make_unique<Libibverbs>(); }

}  // namespace hcashare::doctor
