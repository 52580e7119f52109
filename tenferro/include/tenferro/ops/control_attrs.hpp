#pragma once
// Attributes of the control-flow ops (scan, cond, while_loop; tenferro/control_flow.hpp): each
// carries its bodies as computegraph regions (closed graphs, computegraph/region.hpp), so the
// op's identity includes the bodies' structure and equal loops share keys and compiled programs.
//
// Operand layouts (the ops are variadic, op_def.hpp):
// - scan:  [carry_0 .. carry_{c-1}, xs_0 .. xs_{x-1}, consts...]; body inputs [carry..., x_t...,
//          consts...], body outputs [carry'..., y_t...]; results [final carry..., stacked ys...].
//          xs and ys have the scan's length as their leading axis.
// - scan_adjoint: see ScanAdjointAttrs.
// - cond:  [index (an i64 or bool scalar, clamped into range), operands...]; every branch takes
//          the operands and returns results of the same types.
// - while: [carry..., consts...]; the condition region takes [carry..., consts...] and returns a
//          bool scalar, the body takes the same and returns the carry.
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <vector>

#include "computegraph/region.hpp"
#include "tenferro/ops/op_attrs.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro {

struct StdTensorOp;
struct TensorType;
using Region = computegraph::Region<StdTensorOp>;

namespace detail {
struct BodyProgram;  // a region's compiled program, built on first use (src/exec/region_runner.cpp)
}

/// One region and the executable of its graph (shared by copies of the op; not part of identity).
struct Body {
  Region region;
  std::shared_ptr<detail::BodyProgram> program;

  explicit Body(Region r);
  Body() = default;
  bool operator==(const Body& o) const { return region == o.region; }
};

struct ScanAttrs {
  Body body;
  std::int64_t length = 0;
  bool reverse = false;
  std::uint32_t n_carry = 0, n_xs = 0, n_consts = 0;
  /// Binomial checkpointing over the steps (ScanOptions::checkpoint_snapshots): 0 keeps every
  /// step's residuals for reverse mode; s >= 1 keeps none, and the transpose (scan_adjoint)
  /// recomputes the steps from at most s stored carries by the binomial schedule. The JVP of such
  /// a scan carries the primal state beside the tangents.
  std::int64_t snapshots = 0;
  /// The first n_fixed_carry carries are not linear: in the JVP of a checkpointed scan, the primal
  /// state that the tangent carries are computed beside. The others are linear when the scan is.
  std::uint32_t n_fixed_carry = 0;

  bool operator==(const ScanAttrs& o) const {
    return length == o.length && reverse == o.reverse && n_carry == o.n_carry && n_xs == o.n_xs &&
           n_consts == o.n_consts && snapshots == o.snapshots && n_fixed_carry == o.n_fixed_carry && body == o.body;
  }
  std::size_t hash() const;
  void print(std::ostream& os) const;
};

/// The transpose of a checkpointed linear scan (ScanAttrs::snapshots >= 1, with fixed carries):
/// the reverse sweep, which recomputes the primal carries it needs from the initial one by the
/// binomial schedule (Griewank's revolve) with at most `snapshots` carries stored.
/// Operands [initial fixed carry..., cotangent of the final linear carry..., cotangents of the
/// ys (stacked)..., fixed xs (stacked)..., fixed consts...]; results [cotangent of the initial
/// linear carry..., cotangents of the linear consts..., cotangents of the linear xs (stacked)...].
/// Bodies (all closed graphs):
/// - primal:  [fixed carry, fixed x_t, fixed consts] -> [fixed carry']
/// - adjoint: [ct linear carry', const accumulators, ct y_t, fixed carry, fixed x_t, fixed consts]
///            -> [ct linear carry, accumulators + ct consts, ct linear x_t]
/// - step:    the linear scan's body, [fixed carry, linear carry, fixed x_t, linear x_t, fixed
///            consts, linear consts] -> [fixed carry', linear carry', y_t]: the transpose of this
///            op is that scan again.
struct ScanAdjointAttrs {
  Body primal, adjoint, step;
  std::int64_t length = 0;
  bool reverse = false;  ///< the direction of the linear scan (this op runs the other way)
  std::int64_t snapshots = 0;
  std::uint32_t n_fixed_carry = 0, n_linear_carry = 0, n_ys = 0, n_fixed_xs = 0, n_linear_xs = 0, n_fixed_consts = 0,
                n_linear_consts = 0;

  bool operator==(const ScanAdjointAttrs& o) const {
    return length == o.length && reverse == o.reverse && snapshots == o.snapshots && n_fixed_carry == o.n_fixed_carry &&
           n_linear_carry == o.n_linear_carry && n_ys == o.n_ys && n_fixed_xs == o.n_fixed_xs &&
           n_linear_xs == o.n_linear_xs && n_fixed_consts == o.n_fixed_consts && n_linear_consts == o.n_linear_consts &&
           step == o.step && primal == o.primal && adjoint == o.adjoint;
  }
  std::size_t hash() const;
  void print(std::ostream& os) const;
};

struct CondAttrs {
  std::vector<Body> branches;
  std::uint32_t n_operands = 0;
  /// A checkpoint (tenferro::checkpoint): one branch on the constant index 0, printed as a
  /// checkpoint. Any cond's derivative recomputes its branch's values from its operands (the
  /// branches' JVP and transpose bodies do), so the derivative keeps only the operands; the flag
  /// names that use. The conds derived from a checkpoint keep it.
  bool checkpoint = false;
  /// The derivative reads the cond's results instead of recomputing them (the JVP cond takes them
  /// as operands): set on the checkpoints whose results are kept anyway (the ranges of a
  /// checkpoint policy and of the automatic schedule), so that an SVD a range ends with is not run
  /// again for its derivative. Elsewhere reading them would keep them alive longer (a checkpointed
  /// block inside a scan would stack its results), so derived conds and plain checkpoints
  /// recompute.
  bool reads_results = false;

  bool operator==(const CondAttrs& o) const {
    return n_operands == o.n_operands && checkpoint == o.checkpoint && reads_results == o.reads_results &&
           branches == o.branches;
  }
  std::size_t hash() const;
  void print(std::ostream& os) const;
};

struct WhileAttrs {
  Body cond, body;
  std::uint32_t n_carry = 0, n_consts = 0;

  bool operator==(const WhileAttrs& o) const {
    return n_carry == o.n_carry && n_consts == o.n_consts && cond == o.cond && body == o.body;
  }
  std::size_t hash() const;
  void print(std::ostream& os) const;
};

namespace ops {
/// The control-flow ops from their attributes and operand types (shape rules in scan.cpp,
/// cond.cpp, while_loop.cpp: ShapeError/DTypeError naming the construct otherwise).
StdTensorOp scan(ScanAttrs attrs, std::span<const TensorType> operands);
StdTensorOp scan_adjoint(ScanAdjointAttrs attrs, std::span<const TensorType> operands);
StdTensorOp cond(CondAttrs attrs, std::span<const TensorType> operands);
StdTensorOp while_loop(WhileAttrs attrs, std::span<const TensorType> operands);
}  // namespace ops

}  // namespace tenferro
