// Tests of the Helm chart's own machinery, deploy/helm/hcashare: values.schema.json (which
// helm checks every value against before it renders) describes values.yaml completely and
// rejects mistyped values; the schema validator (tests/json_schema_lite.h) that stands in
// for helm's does what helm's does; templates/NOTES.txt names what was installed; the
// renderer (tests/helm-render: Go's text/template and sprig, plus Helm's own functions and
// values handling) does what helm does. The rendered objects themselves are checked in
// tests/deploy_manifest_test.cc and tests/deploy_overlays_test.cc.
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "tests/deploy_support.h"
#include "tests/json_schema_lite.h"
#include "tests/test_util.h"

namespace hcashare::deploy {
namespace {

using hcashare::testing::ReadTextFile;

const std::string kChart = "deploy/helm/hcashare";

json Schema() {
  const std::string text = ReadTextFile(Src(kChart + "/values.schema.json"));
  if (text.empty()) throw std::runtime_error("cannot read " + kChart + "/values.schema.json");
  return json::parse(text);
}
json DefaultValues() { return LoadYamlFile(Src(kChart + "/values.yaml")).at(0); }

// The rendering error for these values ("" when they render).
std::string RenderError(const json& overrides) {
  try {
    RenderHelm(overrides);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// ---------------------------------------------------------------------------------------
// The validator

std::vector<std::string> Validate(const std::string& schema, const std::string& instance) {
  return ValidateJsonSchema(json::parse(schema), json::parse(instance));
}

TEST(JsonSchemaLite, Types) {
  EXPECT_TRUE(Validate(R"({"type": "integer"})", "3").empty());
  EXPECT_TRUE(Validate(R"({"type": "integer"})", "3.0").empty());  // draft-07: no fraction
  EXPECT_EQ(Validate(R"({"type": "integer"})", "3.5"),
            std::vector<std::string>{"(root): expected integer, got number 3.5"});
  EXPECT_EQ(Validate(R"({"type": "integer"})", "\"3\""),
            std::vector<std::string>{"(root): expected integer, got string \"3\""});
  EXPECT_TRUE(Validate(R"({"type": "number"})", "3").empty());
  EXPECT_TRUE(Validate(R"({"type": ["object", "null"]})", "null").empty());
  EXPECT_EQ(Validate(R"({"type": ["object", "null"]})", "[]").size(), 1u);
  EXPECT_EQ(Validate(R"({"type": "boolean"})", "\"true\"").size(), 1u);
  EXPECT_TRUE(Validate("true", "1").empty());
  EXPECT_EQ(Validate("false", "1").size(), 1u);
}

TEST(JsonSchemaLite, ObjectsAndArrays) {
  const std::string schema = R"({
    "type": "object", "additionalProperties": false, "required": ["a"],
    "properties": {
      "a": {"type": "object", "additionalProperties": {"type": "string"}},
      "l": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"enum": ["x", "y"]}}}})";
  EXPECT_TRUE(Validate(schema, R"({"a": {"k": "v"}, "l": ["x"]})").empty());
  EXPECT_EQ(Validate(schema, R"({"a": {"k": 1}, "b": 2, "l": ["z"]})"),
            (std::vector<std::string>{"a.k: expected string, got integer 1",
                                      "b: unknown key (allowed: a, l)",
                                      "l[0]: \"z\" is not one of [\"x\",\"y\"]"}));
  EXPECT_EQ(
      Validate(schema, R"({"l": []})"),
      (std::vector<std::string>{"(root): required key \"a\" is missing", "l: fewer than 1 items"}));
  EXPECT_EQ(Validate(schema, R"({"a": {}, "l": ["x", "x", "x"]})"),
            std::vector<std::string>{"l: more than 2 items"});
  // Without additionalProperties, other keys are allowed, as in JSON Schema.
  EXPECT_TRUE(Validate(R"({"properties": {"a": {"type": "string"}}})", R"({"b": 1})").empty());
}

TEST(JsonSchemaLite, StringsNumbersAndReferences) {
  const std::string schema = R"({
    "definitions": {"path": {"type": "string", "pattern": "^/", "minLength": 2,
                             "maxLength": 4}},
    "properties": {"p": {"$ref": "#/definitions/path"},
                   "n": {"type": ["integer", "string"], "minimum": 1, "maximum": 9,
                         "pattern": "%$"},
                   "c": {"const": "x"}}})";
  EXPECT_TRUE(Validate(schema, R"({"p": "/ab", "n": 9, "c": "x"})").empty());
  EXPECT_TRUE(Validate(schema, R"({"n": "50%"})").empty());  // minimum is for numbers only
  EXPECT_EQ(Validate(schema, R"({"p": "ab"})"),
            std::vector<std::string>{"p: \"ab\" does not match ^/"});
  EXPECT_EQ(Validate(schema, R"({"p": "/"})"),
            std::vector<std::string>{"p: \"/\" is shorter than 2"});
  EXPECT_EQ(Validate(schema, R"({"p": "/abcd"})"),
            std::vector<std::string>{"p: \"/abcd\" is longer than 4"});
  EXPECT_EQ(Validate(schema, R"({"p": "/é"})").size(), 0u);  // code points, not bytes
  EXPECT_EQ(Validate(schema, R"({"n": 0})"), std::vector<std::string>{"n: 0 is less than 1"});
  EXPECT_EQ(Validate(schema, R"({"n": 10})"), std::vector<std::string>{"n: 10 is more than 9"});
  EXPECT_EQ(Validate(schema, R"({"n": "5"})"),
            std::vector<std::string>{"n: \"5\" does not match %$"});
  EXPECT_EQ(Validate(schema, R"({"c": "y"})"), std::vector<std::string>{"c: \"y\" is not \"x\""});
}

// A keyword it does not implement fails loudly, wherever it is: skipping it would pass
// values that helm rejects.
TEST(JsonSchemaLite, RejectsWhatItDoesNotImplement) {
  for (
      const char* bad :
      {R"({"oneOf": [{"type": "string"}]})", R"({"properties": {"x": {"format": "uri"}}})",
       R"({"definitions": {"d": {"patternProperties": {}}}})",
       R"({"properties": {"x": {"$ref": "#/definitions/missing"}}})",
       R"({"properties": {"x": {"$ref": "other.json#/x"}}})",
       R"({"definitions": {"d": {}}, "properties": {"x": {"$ref": "#/definitions/d", "type": "string"}}})",
       R"({"type": "int"})", R"({"pattern": "("})", R"({"items": [{}]})", R"({"enum": []})",
       R"({"minLength": -1})", "3"}) {
    EXPECT_THROW(Validate(bad, "{}"), std::invalid_argument) << bad;
  }
}

// ---------------------------------------------------------------------------------------
// values.schema.json

TEST(DeployChartSchema, ValuesYamlIsValid) {
  const json schema = Schema();
  EXPECT_EQ(schema.value("$schema", ""), "http://json-schema.org/draft-07/schema#");
  EXPECT_EQ(ValidateJsonSchema(schema, DefaultValues()), std::vector<std::string>{});
}

// Collects the keys of `value` (at `path`) that the schema does not name: a key is
// covered by "properties", or by an "additionalProperties" schema (a map of anything
// the schema types, such as nodeSelector). Object levels of the chart's own must close
// with additionalProperties: false, so that a misspelt key is an error.
void Uncovered(const json& root, json schema, const json& value, const std::string& path,
               std::vector<std::string>* out) {
  if (schema.contains("$ref")) {
    schema = root["definitions"][schema["$ref"].get<std::string>().substr(14)];
  }
  if (value.is_array() && schema.contains("items")) {
    for (const auto& item : value) Uncovered(root, schema["items"], item, path + "[]", out);
  }
  if (!value.is_object()) return;
  const json props = schema.value("properties", json::object());
  const json extra = schema.value("additionalProperties", json(true));
  for (const auto& [k, v] : value.items()) {
    const std::string at = path.empty() ? k : path + "." + k;
    if (props.contains(k)) {
      Uncovered(root, props[k], v, at, out);
    } else if (extra.is_object()) {
      Uncovered(root, extra, v, at, out);
    } else {
      out->push_back(at);
    }
  }
}

TEST(DeployChartSchema, CoversEveryKeyOfValuesYaml) {
  const json schema = Schema();
  std::vector<std::string> uncovered;
  Uncovered(schema, schema, DefaultValues(), "", &uncovered);
  EXPECT_EQ(uncovered, std::vector<std::string>{});
  // Every top-level key is the chart's own: none may be added unchecked.
  EXPECT_EQ(schema["additionalProperties"], false);
  for (const auto& [k, v] : schema["properties"].items()) {
    EXPECT_TRUE(DefaultValues().contains(k)) << k << " is in the schema, not in values.yaml";
    if (v.value("type", json()) == "object" && v.contains("properties") &&
        k != "config") {  // config: the daemon validates it (hcashare validate)
      EXPECT_EQ(v.value("additionalProperties", json(true)), false) << k;
    }
  }
}

// What helm would refuse before rendering, the renderer refuses too, naming the value.
TEST(DeployChartSchema, MistypedValuesFailTheRender) {
  SKIP_WITHOUT_HELM();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"metrics": {"port": "9402"}})", "metrics.port: expected integer, got string \"9402\""},
      {R"({"metrics": {"port": 70000}})", "metrics.port: 70000 is more than 65535"},
      {R"({"metric": {"port": 9402}})", "metric: unknown key"},
      {R"({"cni": {"instal": false}})", "cni.instal: unknown key"},
      {R"({"cdi": {"enabled": "true"}})", "cdi.enabled: expected boolean, got string \"true\""},
      {R"({"image": {"pullPolicy": "Sometimes"}})",
       "image.pullPolicy: \"Sometimes\" is not one of"},
      {R"({"image": {"tag": 1.1}})", "image.tag: expected string, got number 1.1"},
      {R"({"image": {"repository": "repo:1.0"}})", "image.repository: \"repo:1.0\" does not match"},
      {R"({"registration": "watcher"})", "registration: \"watcher\" is not one of"},
      {R"({"logLevel": "verbose"})", "logLevel: \"verbose\" is not one of"},
      {R"({"kubeletRootDir": "var/lib/kubelet"})", "kubeletRootDir: \"var/lib/kubelet\" does not"},
      {R"({"kubeletRootDir": "/var/lib/kubelet/"})", "kubeletRootDir: \"/var/lib/kubelet/\" does"},
      {R"({"devicePluginDir": "device-plugins"})", "devicePluginDir: \"device-plugins\" does not"},
      // What the CNI installer writes into the node file is a path of [A-Za-z0-9._-]
      // (install-cni.sh refuses anything else, in the init container: too late).
      {R"({"cni": {"hostRoot": "host"}})", "cni.hostRoot: \"host\" does not match"},
      {R"({"cni": {"deviceInfoDir": "/var/run/dev info"}})",
       "cni.deviceInfoDir: \"/var/run/dev info\" does not match"},
      {R"({"cni": {"stateDir": "/var/lib/cni/\"x"}})", "cni.stateDir: "},
      {R"({"kubeletRootDir": "/data/kube let"})", "kubeletRootDir: \"/data/kube let\" does"},
      {R"({"updateStrategy": {"maxUnavailable": 0}})", "updateStrategy.maxUnavailable: 0 is less"},
      {R"({"updateStrategy": {"maxUnavailable": "ten"}})",
       "updateStrategy.maxUnavailable: \"ten\" does not match"},
      {R"({"updateStrategy": {"maxSurge": 1}})", "updateStrategy.maxSurge: unknown key"},
      {R"({"securityContext": {"readOnlyRootFileSystem": true}})",
       "securityContext.readOnlyRootFileSystem: unknown key"},
      {R"({"resources": {"limits": {"memory": "64 MiB"}}})",
       "resources.limits.memory: \"64 MiB\" does not match"},
      {R"({"tolerations": [{"key": "x", "operator": "exists"}]})",
       "tolerations[0].operator: \"exists\" is not one of"},
      {R"({"nodeSelector": {"gpu": true}})", "nodeSelector.gpu: expected string, got boolean true"},
      {R"({"extraArgs": "--health-poll-interval=5"})",
       "extraArgs: expected one of [\"array\",\"null\"], got string"},
      {R"({"config": {"configList": [{"rdmaHcaMax": "1000"}]}})",
       "config.configList[0].rdmaHcaMax: expected integer, got string"},
  };
  for (const auto& [values, expected] : cases) {
    SCOPED_TRACE(values);
    const std::string error = RenderError(json::parse(values));
    EXPECT_NE(error.find("values.schema.json"), std::string::npos) << error;
    EXPECT_NE(error.find("\n- " + expected), std::string::npos) << error;
  }
  // What the values are for still renders.
  for (const char* ok :
       {R"({"updateStrategy": {"maxUnavailable": "10%"}})", R"({"nodeSelector": null})",
        R"({"registration": "plugins-registry", "logLevel": "debug", "logFormat": "json"})",
        R"({"securityContext": {"seLinuxOptions": {"type": "spc_t"}}})",
        R"({"resources": {"limits": {"memory": "128Mi", "cpu": 1}}})",
        R"({"cni": {"hostRoot": "/host", "deviceInfoDir": "/run/k8s.cni.cncf.io/devinfo"}})"}) {
    EXPECT_EQ(RenderError(json::parse(ok)), "") << ok;
  }
}

// Every value an enum allows is one the daemon accepts on its command line.
TEST(DeployChartSchema, EnumValuesAreAcceptedByTheDaemon) {
  SKIP_WITHOUT_HELM();
  const json props = Schema()["properties"];
  int runs = 0;
  for (const char* key : {"registration", "logLevel", "logFormat"}) {
    ASSERT_TRUE(props[key].contains("enum")) << key;
    for (const auto& value : props[key]["enum"]) {
      SCOPED_TRACE(std::string(key) + "=" + value.dump());
      const auto objs = RenderHelm(json{{key, value}});
      ASSERT_TRUE(Find(objs, "DaemonSet"));
      std::vector<std::string> argv = {Bin("hcashare-device-plugin")};
      const json spec =
          PodSpec(*Find(objs, "DaemonSet"));  // not a temporary: the loop refers into it
      for (const auto& a : spec["containers"][0]["args"]) {
        argv.push_back(a.get<std::string>());
      }
      argv.push_back("--version");
      const RunResult r = RunProcess(argv);
      EXPECT_EQ(r.code, 0) << r.out << r.err;
      ++runs;
    }
  }
  EXPECT_GE(runs, 9);
}

TEST(DeployChartSchema, MaxUnavailableIsAValue) {
  SKIP_WITHOUT_HELM();
  for (const auto& [value, rendered] :
       std::vector<std::pair<json, json>>{{json(), 1}, {3, 3}, {"25%", "25%"}}) {
    SCOPED_TRACE(value.dump());
    const json overrides =
        value.is_null() ? json::object() : json{{"updateStrategy", {{"maxUnavailable", value}}}};
    const auto objs = RenderHelm(overrides);
    ASSERT_TRUE(Find(objs, "DaemonSet"));
    const json strategy = (*Find(objs, "DaemonSet"))["spec"]["updateStrategy"];
    EXPECT_EQ(strategy["type"], "RollingUpdate");
    EXPECT_EQ(strategy["rollingUpdate"]["maxUnavailable"], rendered);
  }
}

// ---------------------------------------------------------------------------------------
// NOTES.txt

std::string Notes(const json& overrides = json::object()) {
  RenderOptions opts;
  opts.value_overrides = overrides;
  opts.notes = true;
  const auto rendered = RenderChart(Src(kChart), opts);
  return rendered.count("NOTES.txt") ? rendered.at("NOTES.txt") : "";
}

TEST(DeployChartNotes, NameWhatWasInstalledAndHowToCheckIt) {
  SKIP_WITHOUT_HELM();
  const std::string notes = Notes();
  ASSERT_FALSE(notes.empty());
  const auto objs = RenderHelm();
  ASSERT_TRUE(Find(objs, "DaemonSet") && Find(objs, "ConfigMap"));
  const json ds = *Find(objs, "DaemonSet");
  for (const std::string& want : std::vector<std::string>{
           "hcashare 0.1.0 is installed in namespace kube-system", "DaemonSet " + Name(ds),
           "ConfigMap " + Name(*Find(objs, "ConfigMap")), "hcashare-cni into /opt/cni/bin",
           "kubectl -n kube-system get daemonset " + Name(ds),
           "rdma/hca_shared_devices_a, rdma/hca_shared_devices_b", "docs/security.md",
           "README.md"}) {
    EXPECT_NE(notes.find(want), std::string::npos) << want << "\n" << notes;
  }
  // The label selector of the commands selects the DaemonSet's pods.
  const std::string selector = "get pods -l ";
  const size_t at = notes.find(selector);
  ASSERT_NE(at, std::string::npos) << notes;
  const std::string label =
      notes.substr(at + selector.size(),
                   notes.find_first_of(" \n", at + selector.size()) - at - selector.size());
  const size_t eq = label.find('=');
  ASSERT_NE(eq, std::string::npos) << label;
  EXPECT_EQ(ds["spec"]["template"]["metadata"]["labels"].value(label.substr(0, eq), ""),
            label.substr(eq + 1));
  EXPECT_NE(notes.find("-c " + PodSpec(ds)["containers"][0]["name"].get<std::string>()),
            std::string::npos);
  EXPECT_EQ(notes.find("ServiceMonitor"), std::string::npos);
  EXPECT_EQ(notes.find("{{"), std::string::npos);

  // The optional objects, an existing ConfigMap, another name, another namespace.
  RenderOptions opts;
  opts.notes = true;
  opts.release_namespace = "rdma-system";
  opts.value_overrides = json::parse(R"({"fullnameOverride": "rdma",
      "metrics": {"serviceMonitor": {"enabled": true}},
      "configMap": {"create": false, "name": "old-cm"}, "cni": {"install": false}})");
  const std::string other = RenderChart(Src(kChart), opts).at("NOTES.txt");
  for (const char* want :
       {"DaemonSet rdma", "Service rdma-metrics and ServiceMonitor rdma",
        "the existing ConfigMap old-cm", "kubectl -n rdma-system get daemonset rdma"}) {
    EXPECT_NE(other.find(want), std::string::npos) << want << "\n" << other;
  }
  EXPECT_EQ(other.find("hcashare-cni into"), std::string::npos) << other;
  EXPECT_EQ(other.find("rdma/hca_shared"), std::string::npos) << other;  // config not ours
}

// ---------------------------------------------------------------------------------------
// The renderer: Go's text/template and sprig as they are, and what Helm adds (include,
// tpl, required, toYaml and the other YAML and JSON functions, the values) as Helm does it

// Executes `tpl` with `dot` (numbers become float64, as in values) the way a chart
// template is executed; throws with Go's message when it fails.
std::string Render(const std::string& tpl, const json& dot = json::object()) {
  const RunResult r = RunProcess({Bin("hcashare-helm-render"), "-eval=" + tpl}, dot.dump());
  if (r.code != 0) throw std::runtime_error(r.err);
  return r.out;
}

TEST(HelmRenderer, TrimMarkersAndComments) {
  SKIP_WITHOUT_HELM();
  EXPECT_EQ(Render("a  {{- 1 -}}  b"), "a1b");
  EXPECT_EQ(Render("a\n  {{- /* gone */ -}}\n  b"), "ab");
  EXPECT_EQ(Render("a {{/* kept spaces */}} b"), "a  b");
  EXPECT_EQ(Render("{{ \"}}\" }}"), "}}");
  EXPECT_EQ(Render("x{{-1}}"), "x-1");  // "-" without a space is a negative number
}

TEST(HelmRenderer, ControlStructures) {
  SKIP_WITHOUT_HELM();
  const json dot = json::parse(R"({"a": true, "n": 0, "s": "", "l": ["x", "y"], "e": [],
                                   "m": {"b": 2, "a": 1}, "v": {"k": "w"}})");
  EXPECT_EQ(Render("{{ if .a }}1{{ else }}2{{ end }}", dot), "1");
  EXPECT_EQ(Render("{{ if .n }}1{{ else if .s }}2{{ else }}3{{ end }}", dot), "3");
  EXPECT_EQ(Render("{{ if .missing }}1{{ end }}", dot), "");
  EXPECT_EQ(Render("{{ range $i, $v := .l }}{{ $i }}={{ $v }} {{ end }}", dot), "0=x 1=y ");
  EXPECT_EQ(Render("{{ range $k, $v := .m }}{{ $k }}{{ $v }}{{ end }}", dot), "a1b2");
  EXPECT_EQ(Render("{{ range .e }}x{{ else }}empty{{ end }}", dot), "empty");
  EXPECT_EQ(Render("{{ with .v }}{{ .k }}{{ $.a }}{{ end }}", dot), "wtrue");
  EXPECT_EQ(Render("{{ $x := .v.k }}{{ if .a }}{{ $x = \"z\" }}{{ end }}{{ $x }}", dot), "z");
}

TEST(HelmRenderer, Functions) {
  SKIP_WITHOUT_HELM();
  const json dot = json::parse(R"({"e": "", "s": "ab+c", "n": 9402, "list": [1, 2]})");
  EXPECT_EQ(Render("{{ default \"d\" .e }}|{{ .e | default \"d\" }}|{{ default \"d\" .s }}", dot),
            "d|d|ab+c");
  EXPECT_EQ(Render("{{ .s | quote }} {{ quote .n }} {{ \"a\\\"b\" | quote }}", dot),
            "\"ab+c\" \"9402\" \"a\\\"b\"");
  EXPECT_EQ(Render("{{ printf \"%s-%v:%v%%\" .s .n true | replace \"+\" \"_\" }}", dot),
            "ab_c-9402:true%");
  EXPECT_EQ(Render("{{ \"abcdef-\" | trunc 4 }}{{ \"abc-\" | trimSuffix \"-\" }}", dot), "abcdabc");
  EXPECT_EQ(Render("{{ toJson .list }} {{ eq .s \"ab+c\" }} {{ ne .n 9402.0 }} {{ not .e }}", dot),
            "[1,2] true false true");
  EXPECT_EQ(Render("{{ and .s .n }} {{ or .e .s }}", dot), "9402 ab+c");
  EXPECT_EQ(Render("x:{{ \"a: 1\\nb: 2\" | nindent 2 }}", dot), "x:\n  a: 1\n  b: 2");
  EXPECT_EQ(Render("{{ \"a\\nb\" | indent 1 }}", dot), " a\n b");
  EXPECT_EQ(Render("{{ define \"x\" }}[{{ . }}]{{ end }}{{ include \"x\" .s }}"
                   "{{ template \"x\" .n }}",
                   dot),
            "[ab+c][9402]");
}

// The functions Helm adds to sprig's, as Helm defines them.
TEST(HelmRenderer, HelmFunctions) {
  SKIP_WITHOUT_HELM();
  const json dot = json::parse(R"({"a": {"b": 1}, "t": "{{ .a.b }}-{{ include \"x\" . }}"})");
  EXPECT_EQ(Render("{{ define \"x\" }}x{{ end }}{{ tpl .t . }}", dot), "1-x");
  EXPECT_EQ(Render("{{ required \"need a.b\" .a.b }}", dot), "1");
  // YAML 1.1, as sigs.k8s.io/yaml reads it: on is true, 0755 octal, and the key n false.
  EXPECT_EQ(Render("{{ (fromYaml \"k: on\\nm: 0755\").k }} {{ (fromYaml \"m: 0755\").m }}", dot),
            "true 493");
  EXPECT_EQ(Render("{{ fromYaml \"n: 1\" | toJson }}", dot), "{\"false\":1}");
  EXPECT_EQ(Render("{{ (fromYaml \"[\").Error | empty }}", dot), "false");
  EXPECT_EQ(Render("{{ (fromJson \"{\\\"k\\\": [1]}\").k }}", dot), "[1]");
  EXPECT_EQ(Render("{{ lookup \"v1\" \"Pod\" \"ns\" \"p\" | len }}", dot), "0");  // no cluster
}

TEST(HelmRenderer, ToYamlRoundTrips) {
  SKIP_WITHOUT_HELM();
  const json v = json::parse(R"({
    "strings": ["true", "on", "1.0", "0755", "", " lead", "a: b", "- x", "#c", "null", "x:",
                "plain/text", "ünï", "two\nlines"],
    "numbers": [0, -3, 2.5, 1000000], "bools": [true, false], "nothing": null,
    "empty": {"map": {}, "list": []},
    "nested": [{"a": 1, "b": [{"c": "d"}]}, [1, [2]]]})");
  const std::string yaml = Render("{{ toYaml . }}", v);
  EXPECT_EQ(ParseYamlDocuments(yaml).at(0), v) << yaml;
  EXPECT_NE(yaml.back(), '\n');  // Helm trims the trailing newline
}

// Where Go's templates are lenient, what Helm prints: nothing for a missing value (Helm
// removes Go's "<no value>"), Go's syntax for maps and lists, and a value's number as the
// float64 it is (1e+06, not formatted by %d, not equal to an integer constant); the rest
// are errors.
TEST(HelmRenderer, WhatHelmPrintsAndWhatFails) {
  SKIP_WITHOUT_HELM();
  const json dot = json::parse(R"({"a": {"b": 1}, "big": 1000000, "l": [1]})");
  EXPECT_EQ(Render("[{{ .missing }}]", dot), "[]");
  EXPECT_EQ(Render("{{ .a }} {{ .l }} {{ .big }}", dot), "map[b:1] [1] 1e+06");
  EXPECT_EQ(Render("{{ printf \"%d\" .a.b }}", dot), "%!d(float64=1)");
  for (const char* bad :
       {"{{ nosuchfunc 1 }}", "{{ .missing.x }}", "{{ if .a }}", "{{ end }}", "{{ .a.b",
        "{{ $undefined }}", "{{ eq .a.b \"1\" }}", "{{ eq .a.b 1 }}",
        "{{ required \"need it\" .missing }}", "{{ required \"need it\" \"\" }}",
        "{{ include \"nope\" . }}", "{{ env \"HOME\" }}", "{{ expandenv \"$HOME\" }}"}) {
    EXPECT_THROW(Render(bad, dot), std::runtime_error) << bad;
  }
}

// The YAML reader of these tests types scalars as Kubernetes does; the renderer reads
// values.yaml the same way, and merges -f values into it as Helm does (tables merge,
// anything else replaces, null deletes a default).
TEST(HelmRenderer, ValuesAndYamlTyping) {
  const auto docs = ParseYamlDocuments(
      "a: on\nb: 'on'\nc: 0755\nd: 1.5\ne: ~\nf: \"1\"\ng: |\n  x\nh: 12\n---\n---\nz: 1\n");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0], json::parse(R"({"a": true, "b": "on", "c": 493, "d": 1.5, "e": null,
                                     "f": "1", "g": "x\n", "h": 12})"));
  EXPECT_THROW(ParseYamlDocuments("a: 1\na: 2\n"), std::runtime_error);

  SKIP_WITHOUT_HELM();
  TempDir chart("deploy-chart-");
  std::ofstream(chart.path() + "/Chart.yaml") << "apiVersion: v2\nname: t\nversion: 0.0.1\n";
  std::ofstream(chart.path() + "/values.yaml")
      << "a: {x: 1, z: 2}\nl: [1, 2]\ns: v\nb: on\nc: 0755\nd: 'on'\n";
  std::filesystem::create_directory(chart.path() + "/templates");
  std::ofstream(chart.path() + "/templates/values.json") << "{{ toJson .Values }}";
  RenderOptions opts;
  opts.value_overrides = json::parse(R"({"a": {"x": null, "k": 3}, "l": [9], "s": "w"})");
  const auto rendered = RenderChart(chart.path(), opts);
  ASSERT_TRUE(rendered.count("values.json"));
  EXPECT_EQ(json::parse(rendered.at("values.json")),
            json::parse(R"({"a": {"z": 2, "k": 3}, "l": [9], "s": "w", "b": true, "c": 493,
                            "d": "on"})"));
}

}  // namespace
}  // namespace hcashare::deploy
