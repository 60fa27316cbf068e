// The field declarations (sim/scenario/fields.cpp and each scheme's options) agree with the
// parser: every default the parser uses is declared, and the README default of each declared
// field is the value the parser fills in.
#include "sim/scenario/fields.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "sim/core/errors.hpp"
#include "sim/core/param.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/scheme_types.hpp"

using nlohmann::json;
using namespace sgdsim;

namespace {

std::set<std::string> declared() {
  std::set<std::string> pointers;
  for (const FieldDecl& d : scenario_fields()) pointers.insert(d.pointer);
  return pointers;
}

void leaves(const json& j, const std::string& pointer, std::vector<std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) leaves(v, pointer + "/" + k, out);
  } else {
    out.push_back(pointer);
  }
}

/// The value a README default such as "`\"ring\"`" or "`0` (not modelled)" starts with.
std::optional<json> shown_default(const FieldDecl& d) {
  std::smatch m;
  if (!std::regex_search(d.default_text, m, std::regex("^`([^`]*)`"))) return std::nullopt;
  return json::parse(m[1].str(), nullptr, false);
}

}  // namespace

TEST(FieldDecls, EveryPointerOnce) {
  std::set<std::string> seen;
  for (const FieldDecl& d : scenario_fields())
    EXPECT_TRUE(seen.insert(d.pointer).second) << d.pointer;
}

TEST(FieldDecls, EveryDefaultIsDeclared) {
  std::vector<std::string> pointers;
  leaves(scenario_defaults(), "", pointers);
  const auto decl = declared();
  for (const std::string& p : pointers) {
    // A declared ancestor that takes any value (an inline profile) covers what is below it.
    std::string q = p;
    while (!q.empty() && !decl.count(q)) q = q.substr(0, q.rfind('/'));
    EXPECT_EQ(q, p) << p << " has a default but no declaration";
  }
}

TEST(FieldDecls, ReadmeDefaultsAreTheParsersDefaults) {
  const json& defaults = scenario_defaults();
  int checked = 0;
  for (const FieldDecl& d : scenario_fields()) {
    const json::json_pointer p(d.pointer);
    if (d.table.empty() || !defaults.contains(p)) continue;
    // A derived default ("file name without `.json`") is described, not shown as a value.
    std::optional<json> shown = shown_default(d);
    if (!shown) continue;
    ASSERT_FALSE(shown->is_discarded()) << d.pointer << ": " << d.default_text;
    EXPECT_EQ(*shown, defaults.at(p)) << d.pointer;
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

TEST(FieldDecls, SchemeOptionsShowTheDefaultsTheirReadersRecord) {
  for (const std::string& type : scheme_type_names()) {
    Scenario s = parse_scenario(
        {{"model", "resnet50"}, {"workers", {{"count", 4}}}, {"scheme", {{"type", type}}}},
        "fields.json");
    for (const SchemeParam& sp : scheme_type(type).params) {
      const FieldDecl d = param_field(sp.param, "/scheme/");
      const json::json_pointer p(d.pointer);
      ASSERT_TRUE(s.resolved.contains(p)) << type << ": " << d.pointer << " not recorded";
      std::optional<json> shown = shown_default(d);
      ASSERT_TRUE(shown) << d.pointer;
      EXPECT_EQ(*shown, s.resolved.at(p)) << type << ": " << d.pointer;
    }
  }
}

TEST(FieldDecls, ReadmeTablesListOnlyDeclaredTables) {
  const std::string scenario = field_table_markdown("scenario");
  EXPECT_NE(scenario.find("| `collective.algorithm` | `\"ring\"` |"), std::string::npos);
  EXPECT_NE(field_table_markdown("training").find("| `training.dataset` |"), std::string::npos);
  EXPECT_EQ(scenario.find("training.dataset"), std::string::npos);
}

// A declared minimum binds sizes and times too, on the command line and in a scenario.
TEST(Params, SizeAndTimeRespectTheirMinimum) {
  const Param size{.key = "buffer", .type = ParamType::size, .min = 1024};
  EXPECT_FALSE(parse_param_text(size, "512B"));
  EXPECT_FALSE(parse_param_text(size, "1000"));
  ASSERT_TRUE(parse_param_text(size, "1KiB"));
  EXPECT_EQ(parse_param_text(size, "1KiB")->number, 1024);
  const Param time{.key = "delay", .type = ParamType::time, .min = 1e-6};
  EXPECT_FALSE(parse_param_text(time, "0.5us"));
  EXPECT_TRUE(parse_param_text(time, "2us"));
  EXPECT_NE(size.expected().find("at least 1024 bytes"), std::string::npos) << size.expected();

  const json small_value{{"buffer", "512B"}}, fine_value{{"buffer", "2KiB"}};
  JsonObject small(small_value, "s.json", "/collective");  // keeps a reference to the value
  try {
    read_param(small, size);
    ADD_FAILURE() << "512 B accepted below the minimum of 1024";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/collective/buffer"), std::string::npos) << e.what();
  }
  JsonObject fine(fine_value, "s.json", "/collective");
  EXPECT_EQ(read_param(fine, size).number, 2048);
}
