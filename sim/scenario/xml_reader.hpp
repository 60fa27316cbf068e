#pragma once
/// A small non-validating XML reader for SimGrid platform files: elements, attributes (with the
/// five predefined entities and character references), comments, processing instructions,
/// DOCTYPE and CDATA. It exists so platform files can be checked without SimGrid (whose own
/// parser aborts on some inputs); it keeps line numbers for error messages and never recurses.
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sgdsim {

/// One element of an XML document.
struct XmlElement {
  std::string name;                                        ///< tag name
  std::vector<std::pair<std::string, std::string>> attrs;  ///< attributes, in document order
  int line = 0;                                            ///< line of the start tag (1-based)
  std::vector<std::unique_ptr<XmlElement>> children;       ///< child elements in order
  /// The attribute's value, or nullptr when absent.
  const std::string* attr(const std::string& key) const;
};

/// A parsed document.
struct XmlDocument {
  std::unique_ptr<XmlElement> root;  ///< the root element
  std::string doctype;               ///< the root name the DOCTYPE declares, or empty
};

/// Parses `text`; throws InputError(file, "", "line N: ...") when the text is not well-formed
/// XML (or nests deeper than 256 elements).
XmlDocument parse_xml(const std::string& text, const std::string& file);

}  // namespace sgdsim
