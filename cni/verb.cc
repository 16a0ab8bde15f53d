#include "cni/verb.h"

namespace hcashare::cni {

namespace {
constexpr Verb kAllVerbs[] = {Verb::kAdd,    Verb::kDel, Verb::kCheck,
                              Verb::kStatus, Verb::kGc,  Verb::kVersion};
}  // namespace

std::optional<Verb> ParseVerb(std::string_view command) {
  for (Verb verb : kAllVerbs) {
    if (command == VerbName(verb)) return verb;
  }
  return std::nullopt;
}

const char* VerbName(Verb verb) {
  switch (verb) {
    case Verb::kAdd:
      return "ADD";
    case Verb::kDel:
      return "DEL";
    case Verb::kCheck:
      return "CHECK";
    case Verb::kStatus:
      return "STATUS";
    case Verb::kGc:
      return "GC";
    case Verb::kVersion:
      return "VERSION";
  }
  return "?";
}

}  // namespace hcashare::cni
