// The house rules (issue 35): which rooms (top-level source directories) each room may
// include from, as docs/architecture.md's table "Rooms and what each may include" states
// them. The test reads that table and every #include "room/..." of every source file, and
// fails naming each include the table does not allow, so an arrow that runs the wrong way
// (deviceplugin/ <-> dra/, cni/ -> dra/, kube/ -> config/) cannot come back unnoticed, and a
// new room cannot appear without a rule.
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/strings.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

namespace fs = std::filesystem;

using Rules = std::map<std::string, std::set<std::string>>;  // room -> rooms it may include

// The rows "| `room/` | `a/` `b/` ... |" of the table after `heading` in `markdown`; "anything"
// (or "any room") in the second cell allows every room.
Rules ParseRules(const std::string& markdown, const std::string& heading) {
  Rules rules;
  const size_t at = markdown.find(heading);
  if (at == std::string::npos) return rules;
  const std::regex row(R"(^\|\s*`([a-z_]+)/`\s*\|([^|]*)\|)");
  const std::regex room(R"(`([a-z_]+)/`)");
  bool in_table = false;
  for (const std::string& line : SplitOn(markdown.substr(at), '\n')) {
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;  // the table's end
      continue;
    }
    in_table = true;
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::set<std::string>& allowed = rules[m[1]];
    const std::string cell = m[2];
    if (cell.find("anything") != std::string::npos) allowed.insert("*");
    for (std::sregex_iterator it(cell.begin(), cell.end(), room), end; it != end; ++it) {
      allowed.insert((*it)[1]);
    }
  }
  return rules;
}

struct Include {
  std::string file;  // relative to the source root
  int line;
  std::string room;  // the room it includes from
};

// Every `#include "x/..."` of `text` (a file of room `from`), x a directory of the source root.
std::vector<Include> IncludesOf(const std::string& file, const std::string& text,
                                const std::set<std::string>& rooms) {
  std::vector<Include> out;
  const std::regex include(R"(^\s*#\s*include\s*"([a-z_]+)/)");
  int n = 0;
  for (const std::string& line : SplitOn(text, '\n')) {
    ++n;
    std::smatch m;
    if (std::regex_search(line, m, include) && rooms.count(m[1])) out.push_back({file, n, m[1]});
  }
  return out;
}

// The includes of `includes` whose room `rules` does not allow for the including file's room.
std::vector<std::string> Violations(const Rules& rules, const std::vector<Include>& includes) {
  std::vector<std::string> out;
  for (const Include& inc : includes) {
    const std::string from = inc.file.substr(0, inc.file.find('/'));
    if (from == inc.room) continue;
    const auto rule = rules.find(from);
    if (rule == rules.end()) continue;  // reported apart: a room without a rule
    if (rule->second.count("*") || rule->second.count(inc.room)) continue;
    out.push_back(inc.file + ":" + std::to_string(inc.line) + " includes " + inc.room +
                  "/, which " + from + "/ may not");
  }
  return out;
}

const char kHeading[] = "## Rooms and what each may include";

std::string Root() { return HCASHARE_SOURCE_DIR; }

// The top-level directories that hold C++ sources, and every source file in them.
std::map<std::string, std::vector<std::string>> SourcesByRoom() {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& top : fs::directory_iterator(Root())) {
    const std::string room = top.path().filename().string();
    if (!top.is_directory() || room[0] == '.' || room.rfind("build", 0) == 0) continue;
    for (const auto& e : fs::recursive_directory_iterator(top.path())) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cc" || ext == ".h")) {
        out[room].push_back(fs::relative(e.path(), Root()).string());
      }
    }
  }
  return out;
}

TEST(HouseTest, EveryIncludeFollowsTheRoomsRules) {
  const Rules rules = ParseRules(testing::ReadTextFile(Root() + "/docs/architecture.md"), kHeading);
  ASSERT_GE(rules.size(), 15u) << "docs/architecture.md has no table under \"" << kHeading << "\"";
  const auto sources = SourcesByRoom();
  std::set<std::string> rooms;
  for (const auto& [room, files] : sources) rooms.insert(room);
  size_t checked = 0;
  std::vector<std::string> problems;
  for (const auto& [room, files] : sources) {
    if (!rules.count(room)) problems.push_back(room + "/ has sources but no rule in the table");
    for (const std::string& file : files) {
      const auto includes = IncludesOf(file, testing::ReadTextFile(Root() + "/" + file), rooms);
      checked += includes.size();
      for (std::string& v : Violations(rules, includes)) problems.push_back(std::move(v));
    }
  }
  EXPECT_GT(checked, 1000u) << "too few includes found: is HCASHARE_SOURCE_DIR right?";
  EXPECT_TRUE(problems.empty()) << Join(problems, "\n");
}

// The arrows issue 35 removed, named: each is refused by the table as it stands.
TEST(HouseTest, TheArrowsThatRanTheWrongWayAreRefused) {
  const Rules rules = ParseRules(testing::ReadTextFile(Root() + "/docs/architecture.md"), kHeading);
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"deviceplugin", "dra"},
                                                        {"dra", "deviceplugin"},
                                                        {"cni", "dra"},
                                                        {"kube", "config"},
                                                        {"deviceplugin", "daemon"},
                                                        {"dra", "daemon"},
                                                        {"node", "deviceplugin"},
                                                        {"node", "dra"}}) {
    SCOPED_TRACE(from + " -> " + to);
    ASSERT_TRUE(rules.count(from));
    EXPECT_EQ(rules.at(from).count(to), 0u);
    EXPECT_EQ(rules.at(from).count("*"), 0u);
  }
}

// The checker itself: a table and includes that break it are reported, the rest not.
TEST(HouseTest, TheCheckerFindsAWrongArrow) {
  const Rules rules =
      ParseRules("# x\n" + std::string(kHeading) +
                     "\n\n| room | may include |\n|---|---|\n| `a/` | `common/` |\n| `b/` | `a/` "
                     "`common/` |\n| `t/` | anything |\n\nafter\n| `c/` | `b/` |\n",
                 kHeading);
  ASSERT_EQ(rules.size(), 3u);  // the table ends at its first non-table line
  const std::set<std::string> rooms = {"a", "b", "common", "t"};
  const std::vector<Include> includes = IncludesOf(
      "a/x.cc", "#include \"a/x.h\"\n#include \"common/s.h\"\n  #include \"b/y.h\"\n", rooms);
  ASSERT_EQ(includes.size(), 3u);
  EXPECT_EQ(Violations(rules, includes),
            std::vector<std::string>{"a/x.cc:3 includes b/, which a/ may not"});
  EXPECT_TRUE(Violations(rules, IncludesOf("b/y.cc", "#include \"a/x.h\"", rooms)).empty());
  EXPECT_TRUE(Violations(rules, IncludesOf("t/z.cc", "#include \"b/y.h\"", rooms)).empty());
  // Only rooms count: a system or generated header is no arrow.
  EXPECT_TRUE(IncludesOf("a/x.cc", "#include <b/y.h>\n#include \"gen/z.h\"", rooms).empty());
}

}  // namespace
}  // namespace hcashare
