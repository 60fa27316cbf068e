#include "sim/scenario/xml_reader.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "sim/core/errors.hpp"

namespace sgdsim {

const std::string* XmlElement::attr(const std::string& key) const {
  for (const auto& [k, v] : attrs)
    if (k == key) return &v;
  return nullptr;
}

namespace {

constexpr size_t kMaxDepth = 256;

/// Cursor over the document text that counts lines.
class Cursor {
 public:
  Cursor(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  bool done() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool starts_with(const char* s) const {
    return text_.compare(pos_, std::char_traits<char>::length(s), s) == 0;
  }
  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i, ++pos_)
      if (text_[pos_] == '\n') ++line_;
  }
  int line() const { return line_; }
  void skip_space() {
    while (!done() && is_space(peek())) advance();
  }
  /// Skips past `end` (e.g. "-->"); fails naming `what` when it never comes.
  void skip_past(const char* end, const char* what) {
    const size_t at = text_.find(end, pos_);
    if (at == std::string::npos) fail(fmt::format("unterminated {}", what));
    advance(at + std::char_traits<char>::length(end) - pos_);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(file_, "", fmt::format("line {}: not well-formed XML: {}", line_, what));
  }
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':' || static_cast<unsigned char>(c) >= 0x80;
  }
  std::string name() {
    const size_t start = pos_;
    const char c = peek();
    if (!is_name_char(c) || c == '-' || c == '.' || (c >= '0' && c <= '9'))
      fail(fmt::format("expected a name, got '{}'", printable(c)));
    while (!done() && is_name_char(peek())) advance();
    return text_.substr(start, pos_ - start);
  }
  static std::string printable(char c) {
    if (c == '\0') return "end of file";
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      return fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    return std::string(1, c);
  }
  /// A quoted attribute value with its references replaced.
  std::string quoted() {
    const char q = peek();
    if (q != '"' && q != '\'') fail("expected a quoted attribute value");
    advance();
    std::string v;
    while (true) {
      if (done()) fail("unterminated attribute value");
      const char c = peek();
      if (c == q) break;
      if (c == '<') fail("'<' inside an attribute value");
      if (c == '&') {
        v += reference();
        continue;
      }
      v += c;
      advance();
    }
    advance();
    return v;
  }

 private:
  std::string reference() {
    const size_t semi = text_.find(';', pos_);
    if (semi == std::string::npos || semi - pos_ > 12) fail("'&' not followed by a reference");
    const std::string ref = text_.substr(pos_ + 1, semi - pos_ - 1);
    advance(semi + 1 - pos_);
    if (ref == "lt") return "<";
    if (ref == "gt") return ">";
    if (ref == "amp") return "&";
    if (ref == "quot") return "\"";
    if (ref == "apos") return "'";
    if (ref.size() >= 2 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string digits = ref.substr(hex ? 2 : 1);
      uint32_t code = 0;
      if (digits.empty()) fail("empty character reference");
      for (char c : digits) {
        int d = -1;
        if (c >= '0' && c <= '9') d = c - '0';
        if (hex && c >= 'a' && c <= 'f') d = c - 'a' + 10;
        if (hex && c >= 'A' && c <= 'F') d = c - 'A' + 10;
        if (d < 0) fail(fmt::format("bad character reference \"&{};\"", ref));
        code = code * (hex ? 16 : 10) + static_cast<uint32_t>(d);
        if (code > 0x10FFFF) fail(fmt::format("bad character reference \"&{};\"", ref));
      }
      if (code == 0) fail("character reference to NUL");
      return utf8(code);
    }
    fail(fmt::format("unknown entity \"&{};\"", ref));
  }
  static std::string utf8(uint32_t c) {
    std::string s;
    if (c < 0x80) {
      s += static_cast<char>(c);
    } else if (c < 0x800) {
      s += static_cast<char>(0xC0 | (c >> 6));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      s += static_cast<char>(0xE0 | (c >> 12));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (c >> 18));
      s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    }
    return s;
  }

  const std::string& text_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
};

/// Skips comments, processing instructions and the DOCTYPE (its root name into `doctype`);
/// true if something was skipped.
bool skip_misc(Cursor& c, bool doctype_allowed, std::string* doctype = nullptr) {
  if (c.starts_with("<!--")) {
    c.skip_past("-->", "comment");
    return true;
  }
  if (c.starts_with("<?")) {
    c.skip_past("?>", "processing instruction");
    return true;
  }
  if (c.starts_with("<!DOCTYPE")) {
    if (!doctype_allowed) c.fail("DOCTYPE after the root element started");
    c.advance(std::strlen("<!DOCTYPE"));
    c.skip_space();
    if (doctype != nullptr) *doctype = c.name();
    // An internal subset [...] may hold '>' characters.
    int bracket = 0;
    while (!c.done()) {
      const char ch = c.peek();
      if (ch == '[') ++bracket;
      if (ch == ']') --bracket;
      c.advance();
      if (ch == '>' && bracket <= 0) return true;
    }
    c.fail("unterminated DOCTYPE");
  }
  return false;
}

/// Reads a start tag after '<' into `e`; returns true when it closes itself ("/>").
bool start_tag(Cursor& c, XmlElement& e) {
  e.line = c.line();
  e.name = c.name();
  while (true) {
    const bool spaced = Cursor::is_space(c.peek());
    c.skip_space();
    if (c.starts_with("/>")) {
      c.advance(2);
      return true;
    }
    if (c.peek() == '>') {
      c.advance();
      return false;
    }
    if (!spaced) c.fail(fmt::format("expected a space, '>' or '/>' in <{}>", e.name));
    std::string key = c.name();
    c.skip_space();
    if (c.peek() != '=') c.fail(fmt::format("attribute \"{}\" of <{}> has no value", key, e.name));
    c.advance();
    c.skip_space();
    std::string value = c.quoted();
    if (e.attr(key) != nullptr)
      c.fail(fmt::format("attribute \"{}\" given twice in <{}>", key, e.name));
    e.attrs.emplace_back(std::move(key), std::move(value));
  }
}

}  // namespace

XmlDocument parse_xml(const std::string& text, const std::string& file) {
  Cursor c(text, file);
  XmlDocument doc;
  if (c.starts_with("\xEF\xBB\xBF")) c.advance(3);  // UTF-8 byte order mark
  while (true) {
    c.skip_space();
    if (c.done()) c.fail("no root element");
    if (!skip_misc(c, true, &doc.doctype)) break;
  }
  if (c.peek() != '<') c.fail("text before the root element");
  c.advance();
  auto root = std::make_unique<XmlElement>();
  std::vector<XmlElement*> open;
  if (!start_tag(c, *root)) open.push_back(root.get());
  while (!open.empty()) {
    if (c.done()) c.fail(fmt::format("<{}> is never closed", open.back()->name));
    if (c.peek() != '<') {  // character data: SimGrid platforms carry none that matters
      c.advance();
      continue;
    }
    if (skip_misc(c, false)) continue;
    if (c.starts_with("<![CDATA[")) {
      c.skip_past("]]>", "CDATA section");
      continue;
    }
    if (c.starts_with("</")) {
      c.advance(2);
      const std::string name = c.name();
      c.skip_space();
      if (c.peek() != '>') c.fail(fmt::format("expected '>' after </{}", name));
      c.advance();
      if (name != open.back()->name)
        c.fail(fmt::format("</{}> closes <{}> (opened on line {})", name, open.back()->name,
                           open.back()->line));
      open.pop_back();
      continue;
    }
    c.advance();
    auto child = std::make_unique<XmlElement>();
    XmlElement* raw = child.get();
    const bool closed = start_tag(c, *child);
    open.back()->children.push_back(std::move(child));
    if (!closed) {
      if (open.size() >= kMaxDepth) c.fail("elements nest deeper than 256 levels");
      open.push_back(raw);
    }
  }
  while (true) {
    c.skip_space();
    if (c.done()) break;
    if (!skip_misc(c, false)) c.fail("content after the root element");
  }
  doc.root = std::move(root);
  return doc;
}

}  // namespace sgdsim
