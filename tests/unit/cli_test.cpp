// The command line's one option parser (sim/app/cli), its number readers (sim/core/numbers) and
// the subcommand registry's `sgdsim --help` list: no SimGrid.
#include "sim/app/cli.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/numbers.hpp"
#include "sim/core/units.hpp"

namespace sgdsim {
namespace {

/// The message of the InputError `f` throws ("" if it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Cli, IntegerIsTheWholeTextInRange) {
  EXPECT_EQ(parse_integer("42"), 42);
  EXPECT_EQ(parse_integer("-7"), -7);
  for (const char* bad : {"", "+4", " 1", "1 ", "1x", "1e3", "4.0", "0x10", "99999999999999999999"})
    EXPECT_FALSE(parse_integer(bad)) << bad;
  EXPECT_EQ(parse_int_option("--ranks", "8", 1), 8);
  EXPECT_EQ(error_of([] { parse_int_option("--ranks", "0", 1); }),
            "usage: --ranks: expected an integer >= 1, got \"0\"");
  EXPECT_EQ(
      error_of([] { parse_int_option("-j", "4097", 1, 4096, "an integer between 1 and 4096"); }),
      "usage: -j: expected an integer between 1 and 4096, got \"4097\"");
  EXPECT_EQ(parse_int_option("-j", "4096", 1, 4096), 4096);
}

TEST(Cli, PlainNumbersAreFinite) {
  EXPECT_EQ(parse_plain_number("2.5"), 2.5);
  EXPECT_EQ(parse_plain_number("1e6"), 1e6);
  for (const char* bad : {"", "nan", "inf", "-inf", " 1", "1 ", "1e999", "1MB"})
    EXPECT_FALSE(parse_plain_number(bad)) << bad;
}

TEST(Cli, SizeWithUnitOrByteCount) {
  EXPECT_EQ(parse_size_option("--bytes", "100MB", "100MB"), 100e6);
  EXPECT_EQ(parse_size_option("--bytes", "1GiB", "100MB"), 1073741824.0);
  EXPECT_EQ(parse_size_option("--chunk-bytes", "2048", "512KiB"), 2048);
  EXPECT_EQ(parse_size_option("--bytes", "1e6", "100MB"), 1e6);
  for (const char* bad : {"nan", "-1", "inf", "10XB", "", "-5MB"})
    EXPECT_EQ(
        error_of([&] { parse_size_option("--bytes", bad, "100MB"); }),
        std::string("usage: --bytes: expected a size such as \"100MB\" or a byte count, got \"") +
            bad + "\"")
        << bad;
}

TEST(Cli, QuantityNeedsItsUnitAndNoSign) {
  EXPECT_EQ(parse_quantity_option("--bandwidth", "10Gbps", units::parse_bandwidth_Bps, "x"),
            10e9 / 8);
  EXPECT_EQ(error_of([] {
              parse_quantity_option("--bandwidth", "-1Gbps", units::parse_bandwidth_Bps,
                                    "a bandwidth such as \"10Gbps\"");
            }),
            "usage: --bandwidth: expected a bandwidth such as \"10Gbps\", got \"-1Gbps\"");
  EXPECT_NE(error_of([] { parse_quantity_option("--latency", "1", units::parse_time_s, "x"); }),
            "");
}

TEST(Cli, TimeInSecondsOrWithUnit) {
  EXPECT_EQ(parse_time_option("--time-limit", "600"), 600);
  EXPECT_EQ(parse_time_option("--time-limit", "10min"), 600);
  EXPECT_EQ(parse_time_option("--time-limit", "2.5"), 2.5);
  for (const char* bad : {"0", "-1s", "2e9", "abc", "nan"})
    EXPECT_EQ(error_of([&] { parse_time_option("--progress-every", bad, "10", "1min"); }),
              std::string("usage: --progress-every: expected a time > 0 in seconds (\"10\") or "
                          "with a unit (\"1min\"), got \"") +
                  bad + "\"")
        << bad;
}

TEST(Cli, DeclaredOptionsParse) {
  const std::vector<OptionSpec> opts = {
      {"--out", "DIR", "output"}, {"--set", "P=V", "override"}, {"--json", "", "json"}};
  const Args a = parse_args({"x.json", "--out=d", "--set", "a=1", "--set", "b=2", "--json"}, opts);
  EXPECT_EQ(a.positional, std::vector<std::string>{"x.json"});
  EXPECT_EQ(a.get("--out"), "d");
  EXPECT_EQ(a.all("--set"), (std::vector<std::string>{"a=1", "b=2"}));
  EXPECT_TRUE(a.has("--json"));
  EXPECT_EQ(error_of([&] { parse_args({"--bogus"}, opts); }),
            "usage: unknown option --bogus (see --help)");
  EXPECT_EQ(error_of([&] { parse_args({"--json=1"}, opts); }),
            "usage: option --json takes no value");
  EXPECT_EQ(error_of([&] { parse_args({"--out"}, opts); }), "usage: option --out needs a value");
}

TEST(Cli, HelpFromDeclarations) {
  const std::vector<OptionSpec> opts = {{"--out", "DIR", "output folder\nsecond line"},
                                        {"--hidden", "X", ""},
                                        {"--devices-per-node", "D", "ranks per node"},
                                        {"--a-very-long-option", "B", "on the next line"}};
  EXPECT_EQ(options_help(opts, 23),
            "  --out DIR            output folder\n"
            "                       second line\n"
            "  --devices-per-node D ranks per node\n"
            "  --a-very-long-option B\n"
            "                       on the next line\n");
}

int run_test_command(const std::vector<std::string>&) {
  return 0;
}
const RegisterSubcommand kSecond({"second", "second FILE", "listed second", 20, run_test_command});
const RegisterSubcommand kFirst({"first", "first", "listed first", 10, run_test_command}, {"-f"});

TEST(Cli, SubcommandsListedByHelpPosition) {
  EXPECT_EQ(subcommand_list(),
            "  first                    listed first\n"
            "  second FILE              listed second\n");
  EXPECT_EQ(subcommand_registry().find("-f"), subcommand_registry().find("first"));
  EXPECT_EQ(subcommand_registry().find("third"), nullptr);
}

}  // namespace
}  // namespace sgdsim
