// The pre-scan of a config's text (issue 25, "bounded memory"): one pass over its parse
// events, before any tree is built, that counts what the tree would hold and refuses a text
// past the limits in json/document.h (kMaxDocumentValues values and keys, YAML aliases expanded;
// kMaxDocumentDepth levels of nesting). What the parse can then allocate is bounded by the
// limits, whatever the text: see docs/reliability.md ("Config memory").
//
// The pass keeps the open collections' paths (at most kMaxDocumentDepth of them) and, for
// YAML, each anchor's expanded size: nothing that grows with the text.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "json/document.h"

namespace hcashare::jsonin {

// What the pre-scan found.
struct Prescan {
  size_t documents = 0;          // YAML documents in the text (JSON: 0)
  std::optional<Issue> refusal;  // the first limit passed, at the path where it was
};

// Pre-scans JSON text. Stops at the first limit passed; a syntax error before it ends the
// scan with no refusal (the parser then reports it).
Prescan PrescanJson(std::string_view text);

// Pre-scans YAML text. Stops at the first limit passed. Throws YAML::Exception on a syntax
// error before it, and YAML::ParserException where a document starts where the previous one
// did (yaml-cpp 0.7 never gets past a ',' outside a flow collection: it reports an empty
// document there again and again).
Prescan PrescanYaml(const std::string& text);

}  // namespace hcashare::jsonin
