// A document's text (JSON or YAML) -> nlohmann::json tree, within fixed bounds: the reader
// of the product's config (config/) and of kubeconfig files (kube/). JSON paths and the
// quoting helper for messages are in json/fields.h.
//
// Nothing here throws: syntax problems come back as Issues with path "$".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json/fields.h"

namespace hcashare::jsonin {

// Most values (keys included, YAML aliases expanded) and deepest nesting of collections in a
// document; a text past either is refused before its tree is built (json/prescan.h). With a
// bound on the text's size they bound the parse's memory (docs/reliability.md, "Config
// memory").
inline constexpr size_t kMaxDocumentValues = 20000;
inline constexpr int kMaxDocumentDepth = 64;
// Most errors a Document lists; one more issue counts the rest.
inline constexpr size_t kMaxDocumentIssues = 100;

// A parsed document. `parsed` is false on a syntax error or a text the pre-scan refused
// (json/prescan.h: too many values, too deep); then `root` is null and `errors` says why.
// Structural problems that still leave a usable tree (duplicate keys, a YAML alias that nests a
// collection too deep) are in `errors` with `parsed` true, so validation can go on.
struct Document {
  bool parsed = false;
  nlohmann::json root;
  IssueList errors{kMaxDocumentIssues};
};

// Parses JSON text. Duplicate object keys are reported (the last value is kept).
Document ParseJsonText(const std::string& text);

// Parses YAML text (exactly one document) and converts it to JSON types. Plain scalars
// resolve like the YAML 1.2 core schema (null, bool, decimal int, float, else string);
// quoted and block scalars, and those tagged !!str, are always strings.
Document ParseYamlText(const std::string& text);

}  // namespace hcashare::jsonin
