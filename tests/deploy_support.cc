#include "tests/deploy_support.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "common/temp_dir.h"
#include "tests/test_util.h"

#ifndef HCASHARE_SOURCE_DIR
#error "HCASHARE_SOURCE_DIR must be defined (tests/CMakeLists.txt)"
#endif

namespace hcashare::deploy {

using hcashare::testing::BinDir;
using hcashare::testing::ReadTextFile;

const char* const kNoKubectl =
    "no kubectl with kustomize v4+ on PATH (Debian 12's kubernetes-client 1.20 bundles "
    "kustomize v2)";

std::string Src(const std::string& rel) { return std::string(HCASHARE_SOURCE_DIR) + "/" + rel; }

std::string Bin(const std::string& name) { return BinDir() + "/" + name; }

RunResult RunProcess(const std::vector<std::string>& argv, const std::string& input,
                     const std::map<std::string, std::string>& env) {
  TempDir tmp("deploy-run-");
  const std::string in_path = tmp.path() + "/in", out_path = tmp.path() + "/out",
                    err_path = tmp.path() + "/err";
  std::ofstream(in_path) << input;
  const pid_t pid = fork();
  if (pid == 0) {
    const int in = open(in_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  RunResult r;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid) {
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  r.out = ReadTextFile(out_path);
  r.err = ReadTextFile(err_path);
  return r;
}

std::vector<json> LoadYamlFile(const std::string& path) {
  const std::string text = ReadTextFile(path);
  if (text.empty()) throw std::runtime_error("cannot read " + path);
  return ParseYamlDocuments(text);
}

std::string Name(const json& o) { return o.value("metadata", json::object()).value("name", ""); }

std::string Key(const json& o) {
  return o.value("kind", "?") + "/" + o.value("metadata", json::object()).value("namespace", "") +
         "/" + Name(o);
}

const json* Find(const std::vector<json>& objs, const std::string& kind, const std::string& name) {
  for (const auto& o : objs) {
    if (o.value("kind", "") == kind && (name.empty() || Name(o) == name)) {
      return &o;
    }
  }
  return nullptr;
}

std::map<std::string, json> ByKey(const std::vector<json>& objs) {
  std::map<std::string, json> out;
  for (const auto& o : objs) out[Key(o)] = o;
  return out;
}

const json* Item(const json& list, const std::string& name) {
  if (!list.is_array()) return nullptr;
  for (const auto& e : list) {
    if (e.value("name", "") == name) return &e;
  }
  return nullptr;
}

json PodSpec(json ds) { return ds["spec"]["template"]["spec"]; }

std::map<std::string, std::string> ArgMap(const json& args) {
  std::map<std::string, std::string> out;
  if (!args.is_array()) return out;
  for (const auto& a : args) {
    const std::string s = a.get<std::string>();
    const size_t eq = s.find('=');
    out[s.substr(0, eq)] = eq == std::string::npos ? "" : s.substr(eq + 1);
  }
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += "\n  " + s;
  return out;
}

std::vector<json> RenderHelm(const json& overrides) {
  RenderOptions opts;
  opts.value_overrides = overrides;
  std::vector<json> objs;
  for (const auto& [file, text] : RenderChart(Src("deploy/helm/hcashare"), opts)) {
    for (auto& o : ParseYamlDocuments(text)) objs.push_back(o);
  }
  return objs;
}

bool KubectlRequired() {
  const char* v = std::getenv("HCASHARE_KUBECTL_REQUIRED");
  return v != nullptr && std::string(v) == "1";
}

std::optional<std::vector<json>> Kustomize(const std::string& dir) {
  static const bool usable = [] {
    RunResult v = RunProcess({"kubectl", "version", "--client", "-o", "json"}, "",
                             {{"KUBECONFIG", "/dev/null"}});
    if (v.code != 0) return false;
    try {
      const std::string kv = json::parse(v.out).value("kustomizeVersion", "");
      return kv.size() > 1 && kv[0] == 'v' && std::stoi(kv.substr(1)) >= 4;
    } catch (const std::exception&) {
      return false;
    }
  }();
  if (!usable) return std::nullopt;
  RunResult r = RunProcess({"kubectl", "kustomize", dir}, "", {{"KUBECONFIG", "/dev/null"}});
  if (r.code != 0) throw std::runtime_error("kubectl kustomize " + dir + ": " + r.err);
  return ParseYamlDocuments(r.out);
}

}  // namespace hcashare::deploy
