#pragma once
/// A measured-data format as a registered component: how it is recognized, imported, compared
/// by `sgdsim validate` and turned into a model profile. Each format is one file that defines
/// an Importer and registers it with one ImporterRegistration line; nothing else names it.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/param.hpp"
#include "sim/trace/kineto.hpp"
#include "sim/trace/measured.hpp"

namespace sgdsim {

/// How to import a file.
struct ImportOptions {
  std::string format{};  ///< a registered importer's name, or "" to detect
  /// Values of the options given (common_import_params() and the format's Importer::params),
  /// by key; a declared option with a default takes it when not given.
  ParamValues values{};
};

/// How a validation case compares: traces of training steps, per-layer logs, or latency
/// benchmarks.
enum class CaseKind { trace, per_layer, latency };

/// A model profile derived from a measured file (`sgdsim trace --out`).
struct DerivedProfile {
  std::string text;  ///< the profile JSON (models/profiles format)
  std::string what;  ///< one line describing it
};

/// What a file's detector sees: its path and its first 16 KiB (decompressed).
struct FileHead {
  std::string path;       ///< the file
  std::string text;       ///< its first bytes, gzip undone
  std::string_view body;  ///< `text` without leading white space
};

/// One measured format.
class Importer {
 public:
  virtual ~Importer() = default;
  /// The --format / "format" name.
  virtual std::string name() const = 0;
  /// One help paragraph (a line or two) saying what the format is.
  virtual std::string summary() const = 0;
  /// Detectors run in ascending order; the first that recognizes a file wins.
  virtual int detect_order() const = 0;
  /// Whether the file is in this format.
  virtual bool detects(const FileHead& head) const = 0;
  /// The options of its own (beyond common_import_params()), declared once here: the flags
  /// and help of `sgdsim trace`, the source keys of `sgdsim validate` cases and the importer
  /// table of docs/fields.md are made from them. A key two formats declare has one type.
  virtual std::vector<Param> params() const { return {}; }
  /// Reads the file, with the options given (and the defaults of those not given); throws
  /// InputError naming the file for anything malformed.
  virtual MeasuredTrace import(const std::string& path, const ParamValues& options) const = 0;
  /// Reads a file whose format was detected (not given); by default import().
  virtual MeasuredTrace import_detected(const std::string& path, const ParamValues& options) const {
    return import(path, options);
  }
  /// How `sgdsim validate` compares a target of this format (none: not a measured run).
  virtual std::optional<CaseKind> case_kind() const { return std::nullopt; }
  /// The DDP profile a training trace of this format implies (trace formats only).
  virtual DdpProfile ddp_profile(const MeasuredTrace& trace) const;
  /// Whether `sgdsim trace --out` can derive a profile from this format.
  virtual bool derives_profile() const { return false; }
  /// The profile `sgdsim trace --out` writes, with the options given to the import.
  virtual DerivedProfile to_profile(const MeasuredTrace& trace, const ParamValues& options) const;
};

/// Options every format takes ("ranks": the ranks of the run when the file does not say).
std::vector<Param> common_import_params();

/// The options `importer` takes: the common ones, then its own.
std::vector<Param> import_params_of(const Importer& importer);

/// One option as the registered formats declare it.
struct DeclaredImportParam {
  Param param;                       ///< the first declaration (type, range, flag)
  std::vector<std::string> formats;  ///< the formats declaring it; empty: a common option
  /// Per distinct description, the formats that give it: {formats, "brief (default ...)"}.
  std::vector<std::pair<std::vector<std::string>, std::string>> texts;
};

/// Every option of every format: the common ones, then the formats' own in name order (a key
/// once, at its first declaration). Throws std::logic_error if two formats declare one key with
/// different types or ranges.
std::vector<DeclaredImportParam> import_params();

/// The integer value of option `key`, or `absent` if it has none.
int int_option(const ParamValues& options, const std::string& key, int absent);

/// The option lines of the help texts, made from the declarations: command-line flags
/// ("  --batch-size N   kineto: ...") or, with `json_keys`, the keys of a case's sources.
std::string import_options_help(bool json_keys);

/// The importer table of docs/fields.md: | option | formats | default | meaning |.
std::string import_options_markdown();

/// Throws InputError if `options` has a key `importer` does not take ("usage: --skip: only for
/// formats chrome, kineto, sgdsim, not "osu"").
void check_import_options(const Importer& importer, const ParamValues& options);

/// Adds an importer to the registry during static initialization (one line per format).
class ImporterRegistration {
 public:
  /// Registers `importer`; a name registered twice is a programming error.
  explicit ImporterRegistration(std::unique_ptr<Importer> importer);
};

/// The importer called `format`; throws InputError("usage: --format: expected one of ...").
const Importer& importer_named(const std::string& format);

/// The importer called `format`, nullptr if none is.
const Importer* find_importer(const std::string& format);

/// Every registered importer, in name order.
std::vector<const Importer*> importers();

/// The help lines of every format: "  name  summary", aligned.
std::string importer_help();

}  // namespace sgdsim
