#pragma once
/// A measured-data format as a registered component: how it is recognized, imported, compared
/// by `sgdsim validate` and turned into a model profile. Each format is one file that defines
/// an Importer and registers it with one ImporterRegistration line; nothing else names it.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/trace/kineto.hpp"
#include "sim/trace/measured.hpp"

namespace sgdsim {

/// How to import a file.
struct ImportOptions {
  std::string format;  ///< a registered importer's name, or "" to detect
  int ranks = 0;       ///< ranks when the file does not say (osu, bcaffe, nccl-tests)
  int warmup = -1;     ///< leading steps left out of the statistics (-1: the source's default)
  int batch_size = 0;  ///< pipedream: batch size when the graph does not imply one
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
  /// Reads the file; throws InputError naming the file for anything malformed.
  virtual MeasuredTrace import(const std::string& path, const ImportOptions& options) const = 0;
  /// How `sgdsim validate` compares a target of this format (none: not a measured run).
  virtual std::optional<CaseKind> case_kind() const { return std::nullopt; }
  /// The DDP profile a training trace of this format implies (trace formats only).
  virtual DdpProfile ddp_profile(const MeasuredTrace& trace) const;
  /// Whether `sgdsim trace --out` can derive a profile from this format.
  virtual bool derives_profile() const { return false; }
  /// The profile `sgdsim trace --out` writes; batch_size 0 means not given.
  virtual DerivedProfile to_profile(const MeasuredTrace& trace, int batch_size) const;
};

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
