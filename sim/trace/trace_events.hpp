#pragma once
/// Streaming reader of Chrome trace event JSON (Kineto/PyTorch profiler traces, sgdsim's
/// timeline.json), gzipped or not: keeps the complete ("X") and metadata ("M") events with the
/// fields the importers use, strings interned, and the top-level metadata.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace sgdsim {

/// One complete ("X") or metadata ("M") event; string fields are ids into TraceEventFile.
struct TraceEvent {
  int name = -1;             ///< "name"
  int cat = -1;              ///< "cat" (-1: absent)
  char ph = 0;               ///< first letter of "ph"
  double ts_us = 0;          ///< "ts" in microseconds
  double dur_us = 0;         ///< "dur" in microseconds (0 if absent)
  int64_t pid = 0;           ///< "pid" (string pids are interned and stored as -(1 + id))
  int64_t tid = 0;           ///< "tid" (string tids likewise)
  int collective = -1;       ///< args "Collective name"
  double nelems = -1;        ///< args "In msg nelems"
  int dtype = -1;            ///< args "dtype"
  int group_size = 0;        ///< args "Group size"
  int64_t iteration = -1;    ///< args "iteration" (sgdsim timelines)
  int64_t bucket = -1;       ///< args "bucket" (sgdsim timelines)
  double bytes = -1;         ///< args "bytes" (sgdsim timelines)
  int arg_name = -1;         ///< args "name" (metadata events)
  int64_t sequence = -1;     ///< args "Sequence number" (autograd: links a forward op to its node)
  int64_t correlation = -1;  ///< args "correlation" (links a CUDA runtime call to its kernel)
  double threads = -1;       ///< product of args "grid" and "block" (GPU kernels; -1: absent)
};

/// The events and top-level metadata of one trace file.
struct TraceEventFile {
  std::string file;                 ///< where it was read from
  bool object_form = true;          ///< {"traceEvents": [...]} (false: a bare array of events)
  std::vector<TraceEvent> events;   ///< X and M events in file order
  size_t other_events = 0;          ///< events of other phases (flows, instants, ...) skipped
  int rank = -1;                    ///< distributedInfo.rank
  int world_size = 0;               ///< distributedInfo.world_size
  bool has_schema_version = false;  ///< a Kineto "schemaVersion" key is present
  std::string device;               ///< deviceProperties[0].name
  std::string time_unit;            ///< otherData.time_unit (sgdsim timelines)
  std::string scenario;             ///< otherData.scenario (sgdsim timelines)
  size_t bytes_read = 0;            ///< uncompressed bytes parsed
  /// The text of interned string `id` ("" for -1).
  const std::string& str(int id) const;
  /// The id of `text`, or -1 if no event uses it.
  int find(const std::string& text) const;
  /// Interns `text` (used by the reader).
  int intern(const std::string& text);

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int> ids_;
};

/// Reads a Chrome trace JSON file (plain or gzip) in one streaming pass. Throws InputError
/// naming the file (and the JSON pointer of a bad field) for malformed JSON, corrupt gzip
/// data, a document that is not a trace, or fields of the wrong type.
TraceEventFile read_trace_events(const std::string& path);

}  // namespace sgdsim
