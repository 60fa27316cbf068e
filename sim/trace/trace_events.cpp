// One SAX pass over a Chrome trace: a small state machine keyed on the path from the root
// (top object -> traceEvents -> event -> args), so large traces never become a JSON tree.
#include "sim/trace/trace_events.hpp"

#include <fmt/format.h>

#include <cmath>
#include <istream>
#include <nlohmann/json.hpp>

#include "sim/core/errors.hpp"
#include "sim/trace/input_file.hpp"

namespace sgdsim {

const std::string& TraceEventFile::str(int id) const {
  static const std::string empty;
  return id < 0 || static_cast<size_t>(id) >= strings_.size() ? empty : strings_[id];
}

int TraceEventFile::find(const std::string& text) const {
  auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

int TraceEventFile::intern(const std::string& text) {
  auto [it, inserted] = ids_.try_emplace(text, static_cast<int>(strings_.size()));
  if (inserted) strings_.push_back(text);
  return it->second;
}

namespace {

using nlohmann::json;

enum class Ctx {
  root,        // before the first value
  top,         // the top-level object
  events,      // the traceEvents array (or the top-level array)
  event,       // one event object
  args,        // an event's args object
  dist_info,   // distributedInfo
  dev_props,   // deviceProperties array
  dev_prop,    // one deviceProperties element
  other_data,  // otherData (sgdsim timelines)
  dims,        // an event's args "grid" or "block" array (GPU kernels)
  ignored,     // a container whose content is not used
};

enum class Field {
  none,
  // event
  name,
  cat,
  ph,
  ts,
  dur,
  pid,
  tid,
  // args
  collective,
  nelems,
  dtype,
  group_size,
  iteration,
  bucket,
  bytes,
  arg_name,
  sequence,
  correlation,
  // top level and metadata objects
  schema_version,
  rank,
  world_size,
  device_name,
  time_unit,
  scenario,
};

struct Frame {
  explicit Frame(Ctx c) : ctx(c) {}
  Ctx ctx;
  size_t index = 0;           // arrays: elements seen so far
  Field field = Field::none;  // objects: what the current key is
  std::string key;            // objects: the current key (for messages)
};

/// A scalar value as the handler sees it.
struct Scalar {
  enum Kind { null, boolean, integer, unsigned_integer, floating, string };
  explicit Scalar(Kind k, double x = 0, int64_t i = 0, const std::string* t = nullptr)
      : kind(k), number(x), integer_value(i), text(t) {}
  Kind kind;
  double number = 0;
  int64_t integer_value = 0;
  const std::string* text = nullptr;
  std::string show() const {
    switch (kind) {
      case null:
        return "null";
      case boolean:
        return number != 0 ? "true" : "false";
      case integer:
      case unsigned_integer:
        return std::to_string(integer_value);
      case floating:
        return fmt::format("{}", number);
      case string: {
        std::string s = json(*text).dump();
        return s.size() > 60 ? s.substr(0, 57) + "..." : s;
      }
    }
    return "?";
  }
  bool is_number() const { return kind == integer || kind == unsigned_integer || kind == floating; }
};

/// Largest magnitude of a JSON number read into an int field.
constexpr double kIntLimit = 2147483647.0;

class Handler : public nlohmann::json_sax<json> {
 public:
  explicit Handler(TraceEventFile& out) : out_(out) { stack_.emplace_back(Ctx::root); }

  bool null() override { return scalar(Scalar(Scalar::null)); }
  bool boolean(bool v) override { return scalar(Scalar(Scalar::boolean, v ? 1.0 : 0.0)); }
  bool number_integer(number_integer_t v) override {
    return scalar(Scalar(Scalar::integer, static_cast<double>(v), v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    return scalar(
        Scalar(Scalar::unsigned_integer, static_cast<double>(v), static_cast<int64_t>(v)));
  }
  bool number_float(number_float_t v, const string_t&) override {
    const bool fits = v > -9e18 && v < 9e18;
    return scalar(Scalar(Scalar::floating, v, fits ? static_cast<int64_t>(v) : 0));
  }
  bool string(string_t& v) override { return scalar(Scalar(Scalar::string, 0, 0, &v)); }
  bool binary(binary_t&) override { return scalar(Scalar(Scalar::null)); }

  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    Frame& f = stack_.back();
    f.key = k;
    f.field = field_of(f.ctx, k);
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    if (what.find("empty input") != std::string::npos)
      throw InputError(out_.file, "",
                       "empty file: expected a Chrome trace (a JSON object with \"traceEvents\", "
                       "or an array of events)");
    auto pos = what.find("parse error");
    throw InputError(out_.file, "",
                     "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  }

  /// Checks that the document was a trace at all.
  void finish() const {
    if (!saw_events_)
      throw InputError(out_.file, "",
                       "expected a Chrome trace: a JSON object with a \"traceEvents\" array (or "
                       "an array of events), found no \"traceEvents\"");
  }

 private:
  static Field field_of(Ctx ctx, const std::string& k) {
    switch (ctx) {
      case Ctx::event:
        if (k == "name") return Field::name;
        if (k == "cat") return Field::cat;
        if (k == "ph") return Field::ph;
        if (k == "ts") return Field::ts;
        if (k == "dur") return Field::dur;
        if (k == "pid") return Field::pid;
        if (k == "tid") return Field::tid;
        return Field::none;
      case Ctx::args:
        if (k == "Collective name") return Field::collective;
        if (k == "In msg nelems") return Field::nelems;
        if (k == "dtype") return Field::dtype;
        if (k == "Group size") return Field::group_size;
        if (k == "iteration") return Field::iteration;
        if (k == "bucket") return Field::bucket;
        if (k == "bytes") return Field::bytes;
        if (k == "name") return Field::arg_name;
        if (k == "Sequence number") return Field::sequence;
        if (k == "correlation") return Field::correlation;
        return Field::none;
      case Ctx::top:
        if (k == "schemaVersion") return Field::schema_version;
        return Field::none;
      case Ctx::dist_info:
        if (k == "rank") return Field::rank;
        if (k == "world_size") return Field::world_size;
        return Field::none;
      case Ctx::dev_prop:
        if (k == "name") return Field::device_name;
        return Field::none;
      case Ctx::other_data:
        if (k == "time_unit") return Field::time_unit;
        if (k == "scenario") return Field::scenario;
        return Field::none;
      default:
        return Field::none;
    }
  }

  /// JSON pointer of the value being read (for messages).
  std::string pointer() const {
    std::string p;
    for (size_t i = 1; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.ctx == Ctx::events || f.ctx == Ctx::dev_props || f.ctx == Ctx::dims ||
          (f.ctx == Ctx::ignored && f.key.empty()))
        p += "/" + std::to_string(f.index == 0 ? 0 : f.index - 1);
      else
        p += "/" + f.key;
    }
    return p.empty() ? "/" : p;
  }

  [[noreturn]] void fail(const std::string& expected, const std::string& got) const {
    throw InputError(out_.file, pointer(), "expected " + expected + ", got " + got);
  }

  /// Called for every value before it is consumed: advances array indices.
  Frame& before_value() {
    Frame& f = stack_.back();
    if (f.ctx == Ctx::events || f.ctx == Ctx::dev_props || f.ctx == Ctx::dims ||
        f.ctx == Ctx::ignored)
      ++f.index;
    return f;
  }

  bool open(bool array) {
    Frame& f = before_value();
    Ctx next = Ctx::ignored;
    switch (f.ctx) {
      case Ctx::root:
        if (array) {
          out_.object_form = false;
          saw_events_ = true;
          next = Ctx::events;
        } else {
          next = Ctx::top;
        }
        break;
      case Ctx::top:
        if (f.key == "traceEvents") {
          if (!array) fail("an array of trace events", "an object");
          saw_events_ = true;
          next = Ctx::events;
        } else if (f.key == "distributedInfo" && !array) {
          next = Ctx::dist_info;
        } else if (f.key == "deviceProperties" && array) {
          next = Ctx::dev_props;
        } else if (f.key == "otherData" && !array) {
          next = Ctx::other_data;
        }
        break;
      case Ctx::events:
        if (array) fail("an event object", "an array");
        event_ = TraceEvent{};
        has_ph_ = has_ts_ = false;
        next = Ctx::event;
        break;
      case Ctx::event:
        if (f.field == Field::name || f.field == Field::ph || f.field == Field::ts ||
            f.field == Field::dur || f.field == Field::cat)
          fail(f.field == Field::ts || f.field == Field::dur ? "a number" : "a string",
               array ? "an array" : "an object");
        if (f.key == "args" && !array) next = Ctx::args;
        break;
      case Ctx::args:
        // Launch dimensions: their product is the kernel's thread count.
        if (array && (f.key == "grid" || f.key == "block")) {
          if (event_.threads < 0) event_.threads = 1;
          next = Ctx::dims;
        }
        break;
      case Ctx::dev_props:
        if (!array && f.index == 1) next = Ctx::dev_prop;
        break;
      default:
        break;
    }
    Frame frame{next};
    if (next == Ctx::ignored && !array) frame.key = "?";  // objects inside ignored containers
    stack_.push_back(frame);
    return true;
  }

  bool close() {
    const Ctx ctx = stack_.back().ctx;
    stack_.pop_back();
    if (ctx == Ctx::event) {
      if (!has_ph_) fail_event("a \"ph\" (phase) string in every event");
      if (event_.ph == 'X' || event_.ph == 'M') {
        if (event_.ph == 'X' && !has_ts_) fail_event("a \"ts\" (number) in every \"X\" event");
        out_.events.push_back(event_);
      } else {
        ++out_.other_events;
      }
    }
    return true;
  }

  [[noreturn]] void fail_event(const std::string& expected) const {
    // The event object was just popped: its index is the events frame's count - 1.
    std::string p;
    for (size_t i = 1; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      p += "/" + (f.ctx == Ctx::events ? std::to_string(f.index - 1) : f.key);
    }
    throw InputError(out_.file, p.empty() ? "/" : p, "expected " + expected);
  }

  int64_t id_value(const Scalar& v, const char* what) {
    if (v.kind == Scalar::integer || v.kind == Scalar::unsigned_integer) return v.integer_value;
    if (v.kind == Scalar::floating) return whole_number(v, 9e18);
    if (v.kind == Scalar::string) return -1 - static_cast<int64_t>(out_.intern(*v.text));
    fail(std::string("a number or string ") + what, v.show());
  }

  int string_id(const Scalar& v) {
    if (v.kind != Scalar::string) fail("a string", v.show());
    return out_.intern(*v.text);
  }

  double number(const Scalar& v) {
    if (!v.is_number()) fail("a number", v.show());
    return v.number;
  }

  /// A number field used as an integer (truncated); fails beyond +-`limit` rather than
  /// converting out of range.
  int64_t whole_number(const Scalar& v, double limit) {
    const double x = number(v);
    if (!(std::abs(x) <= limit)) fail(fmt::format("a number within +-{:.10g}", limit), v.show());
    return static_cast<int64_t>(x);
  }

  /// A field of a trace event.
  bool event_field(Field field, const Scalar& v) {
    switch (field) {
      case Field::name:
        event_.name = v.kind == Scalar::string ? out_.intern(*v.text)
                                               : out_.intern(v.show());  // numeric names
        return true;
      case Field::cat:
        event_.cat = string_id(v);
        return true;
      case Field::ph:
        if (v.kind != Scalar::string || v.text->empty()) fail("a phase string", v.show());
        event_.ph = (*v.text)[0];
        has_ph_ = true;
        return true;
      case Field::ts:
        event_.ts_us = number(v);
        has_ts_ = true;
        return true;
      case Field::dur:
        event_.dur_us = number(v);
        if (event_.dur_us < 0) fail("a duration >= 0", v.show());
        return true;
      case Field::pid:
        event_.pid = id_value(v, "(process id)");
        return true;
      case Field::tid:
        event_.tid = id_value(v, "(thread id)");
        return true;
      default:
        return true;
    }
  }

  /// A field of an event's "args".
  bool arg_field(Field field, const Scalar& v) {
    switch (field) {
      case Field::collective:
        event_.collective = string_id(v);
        return true;
      case Field::nelems:
        event_.nelems = number(v);
        return true;
      case Field::dtype:
        event_.dtype = string_id(v);
        return true;
      case Field::group_size:
        event_.group_size = static_cast<int>(whole_number(v, kIntLimit));
        return true;
      case Field::iteration:
        event_.iteration = whole_number(v, 9e18);
        return true;
      case Field::bucket:
        event_.bucket = whole_number(v, 9e18);
        return true;
      case Field::bytes:
        event_.bytes = number(v);
        return true;
      case Field::arg_name:
        if (v.kind == Scalar::string) event_.arg_name = out_.intern(*v.text);
        return true;
      case Field::sequence:
        event_.sequence = whole_number(v, 9e18);
        return true;
      case Field::correlation:
        event_.correlation = whole_number(v, 9e18);
        return true;
      default:
        return true;
    }
  }

  bool scalar(const Scalar& v) {
    Frame& f = before_value();
    switch (f.ctx) {
      case Ctx::root:
        fail("a Chrome trace (a JSON object with \"traceEvents\", or an array of events)",
             v.show());
      case Ctx::events:
        fail("an event object", v.show());
      case Ctx::top:
        if (f.key == "traceEvents") fail("an array of trace events", v.show());
        if (f.field == Field::schema_version) out_.has_schema_version = true;
        return true;
      case Ctx::event:
        return event_field(f.field, v);
      case Ctx::args:
        return arg_field(f.field, v);
      case Ctx::dims: {
        const double x = number(v);
        if (!(x >= 0 && x <= kIntLimit)) fail("a launch dimension in [0, 2147483647]", v.show());
        event_.threads *= x;
        return true;
      }
      case Ctx::dist_info:
        if (f.field == Field::rank) out_.rank = static_cast<int>(whole_number(v, kIntLimit));
        if (f.field == Field::world_size)
          out_.world_size = static_cast<int>(whole_number(v, kIntLimit));
        return true;
      case Ctx::dev_prop:
        if (f.field == Field::device_name && v.kind == Scalar::string) out_.device = *v.text;
        return true;
      case Ctx::other_data:
        if (f.field == Field::time_unit && v.kind == Scalar::string) out_.time_unit = *v.text;
        if (f.field == Field::scenario && v.kind == Scalar::string) out_.scenario = *v.text;
        return true;
      default:
        return true;
    }
  }

  TraceEventFile& out_;
  std::vector<Frame> stack_;
  TraceEvent event_;
  bool has_ph_ = false;
  bool has_ts_ = false;
  bool saw_events_ = false;
};

}  // namespace

TraceEventFile read_trace_events(const std::string& path) {
  TraceEventFile out;
  out.file = path;
  MaybeGzipBuffer buffer(path);
  if (buffer.sgetc() == std::char_traits<char>::eof())
    throw InputError(path, "",
                     "empty file: expected a Chrome trace (a JSON object with \"traceEvents\", or "
                     "an array of events)");
  std::istream in(&buffer);
  Handler handler(out);
  json::sax_parse(in, &handler);
  handler.finish();
  out.bytes_read = buffer.bytes_read();
  return out;
}

}  // namespace sgdsim
