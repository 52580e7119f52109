#pragma once
// The op list's elementwise functions as the random programs see them.
//
// Every U and B entry of tenferro/op_list.hpp (a function that is one op: tf::exp, tf::atan2, ...)
// is drawn by the generator with nothing written for it in tenferro/testing: the table below is
// the list expanded, and everything else the fuzzer needs comes from the op's definition (OpDef):
// which dtypes it takes (its shape rule), where its operands are drawn (OpDef::domain: exp(a)
// for a Positive op, ...) and where it is not smooth (OpDef::discontinuity on real operands,
// OpDef::branch_cut on complex ones), from which the indicators below follow. Functions that are
// not one such entry (sigmoid, pow, maximum, where, polygamma(1, x), ...) are the hand-written
// FuzzOps of random_program.hpp.
#include <cstddef>
#include <vector>

#include "tenferro/ops/op_kind.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::testing {

/// One U or B entry of the op list.
struct ListedFunction {
  OpKind kind;        ///< its op
  const char* name;   ///< the function's name: tf::name, tf.name in Python
  std::size_t arity;  ///< 1 (U: name(x)) or 2 (B: name(a, b), broadcasting)
  Traced (*unary)(const Traced&);                  ///< the function, for arity 1
  Traced (*binary)(const Traced&, const Traced&);  ///< the function, for arity 2
};

/// Every U and B entry of the op list, in list order.
const std::vector<ListedFunction>& listed_functions();
/// The entry whose op is `kind`; throws Error if the op list names no function of that op.
const ListedFunction& listed_function(OpKind kind);

/// Where the function of op `kind` applied to `args` is not smooth, from its definition: values
/// that change exactly where it jumps (OpDef::discontinuity for real float operands: a kink only
/// with `kinks`; OpDef::branch_cut for complex ones), each of the operands' shape. A central
/// difference is compared with a derivative only where every point of its stencil gives the
/// values the point itself gives.
std::vector<Traced> function_jump_indicators(OpKind kind, const std::vector<Traced>& args, bool kinks);
/// The same jumps as distances (f64 scalars, one per jump): over the elements, the smallest
/// distance of the operands from a jump (to the nearest integer, to 0, across a cut relative to
/// the operand's size). A distance within rounding means that another computation of the same
/// value may lie on the other side.
std::vector<Traced> function_jump_margins(OpKind kind, const std::vector<Traced>& args, bool kinks);

}  // namespace tenferro::testing
