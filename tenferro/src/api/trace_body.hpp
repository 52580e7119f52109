#pragma once
// Internal: tracing C++ callables into body regions for the control-flow constructs
// (api/control_flow.cpp, api/root.cpp). The traced body is then an op's attribute; what the ops
// do with bodies is in regions/bodies.hpp.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tenferro/ops/control_attrs.hpp"
#include "tenferro/traced.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro::detail {

using BodyFn = std::function<std::vector<Traced>(std::span<const Traced>)>;

/// A body traced from a callable: its region and the values of enclosing traces it captured
/// (the op passes them as operands, after its own).
struct TracedBody {
  Region region;
  std::vector<Traced> captures;
};

/// Traces `fn` on fresh inputs of `types`, nested in `parent` (the trace the op is recorded into).
/// `captures` are captured first, in order (so that several regions of one op share one capture
/// list); values the body reads from enclosing traces beyond them are appended. Results that
/// belong to an enclosing trace are captured too. `who` names the construct in errors.
TracedBody trace_body(const std::shared_ptr<TraceState>& parent, std::span<const TensorType> types, const BodyFn& fn,
                      std::span<const Traced> captures, const std::string& who);

/// Traces several regions that take the same inputs and share one capture list: each is traced
/// once; those that captured less than the union are traced again with the union captured first.
std::pair<std::vector<Region>, std::vector<Traced>> trace_bodies(const std::shared_ptr<TraceState>& parent,
                                                                 std::span<const TensorType> types,
                                                                 std::span<const BodyFn> fns, const std::string& who);

/// Marks `state` as being recorded on this thread while the scope lives (trace_function, and
/// trace_body for bodies): recording_anchor (transforms.hpp) reads the innermost.
class RecordingScope {
 public:
  explicit RecordingScope(std::shared_ptr<TraceState> state);
  ~RecordingScope();
  RecordingScope(const RecordingScope&) = delete;
  RecordingScope& operator=(const RecordingScope&) = delete;
};

/// The innermost body this thread is tracing (null outside every body). Operations of an eager
/// trace that this body encloses are recorded into it (captured) rather than run at once: a body
/// may be traced more than once (trace_bodies), and running them would make new eager values, and
/// so new captures, each time.
std::shared_ptr<TraceState> body_being_traced();

/// The trace every one of `values` belongs to or is enclosed by (the innermost); Error naming
/// `who` if there is none.
std::shared_ptr<TraceState> innermost(std::span<const Traced> values, const std::string& who);

}  // namespace tenferro::detail
