// Configuration text (JSON or YAML) -> nlohmann::json tree. JSON paths and the quoting
// helper for messages are in json/fields.h (config/json_fields.h names them here).
//
// Nothing here throws: syntax problems come back as ConfigIssues with path "$".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_fields.h"

namespace hcashare::config {

// A parsed document. `parsed` is false on a syntax error or a text the pre-scan refused
// (config/prescan.h: too many values, too deep); then `root` is null and `errors` says why.
// Structural problems that still leave a usable tree (duplicate keys, a YAML alias that nests a
// collection too deep) are in `errors` with `parsed` true, so validation can go on.
struct Document {
  bool parsed = false;
  nlohmann::json root;
  IssueList errors{kMaxListedIssues};
};

// Parses JSON text. Duplicate object keys are reported (the last value is kept).
Document ParseJsonText(const std::string& text);

// Parses YAML text (exactly one document) and converts it to JSON types. Plain scalars
// resolve like the YAML 1.2 core schema (null, bool, decimal int, float, else string);
// quoted and block scalars, and those tagged !!str, are always strings.
Document ParseYamlText(const std::string& text);

}  // namespace hcashare::config
