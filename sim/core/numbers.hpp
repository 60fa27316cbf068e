#pragma once
/// The one reader of plain numbers in text (command-line values, declared options' text): a
/// decimal integer, or a finite decimal number, covering the whole text.
#include <cstdint>
#include <optional>
#include <string_view>

namespace sgdsim {

/// `text` whole a decimal integer ("42", "-1"; no sign '+', no spaces), else nothing.
std::optional<int64_t> parse_integer(std::string_view text);

/// `text` whole a finite decimal number ("4096", "2.5", "1e6"; no "nan", "inf", spaces or hex),
/// else nothing.
std::optional<double> parse_plain_number(std::string_view text);

}  // namespace sgdsim
