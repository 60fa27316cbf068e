#pragma once
/// Small helpers shared by the line-oriented log importers (OSU-style, nccl-tests, B-Caffe,
/// PipeDream): whitespace splitting, trimming and strict number parsing.
#include <string>
#include <string_view>
#include <vector>

namespace sgdsim::text {

/// Splits on spaces and tabs.
std::vector<std::string_view> split_ws(std::string_view s);
/// Removes leading and trailing spaces, tabs and '\r'.
std::string_view trim(std::string_view s);
/// Parses the whole of `s` as a finite double.
bool parse_double(std::string_view s, double& out);
/// Parses the whole of `s` as a 64-bit integer.
bool parse_int(std::string_view s, long long& out);
/// "line N".
std::string line_ref(size_t line);
/// `s` quoted and shortened to about 80 characters, for messages.
std::string quote(std::string_view s);

}  // namespace sgdsim::text
