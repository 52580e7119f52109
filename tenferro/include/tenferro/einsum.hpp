#pragma once
// einsum: Einstein summation over any number of operands, on traced and on concrete tensors.
//
//   Traced c = tf::einsum("bij,bjk->bik", a, b);          // traced: differentiable, any order
//   Tensor d = tf::einsum("ij,jk,kl->il", {x, y, z});      // concrete: compiled once, cached
//   auto path = tf::einsum_path("ij,jk,kl->il", {x.shape(), y.shape(), z.shape()});
//   std::cout << path.print();                             // steps, log2 flops, log2 size
//
// Subscripts (NumPy's grammar): one term of letters (a-z, A-Z) per operand, separated by ',',
// optionally '->' and the output's term. Without '->' the output holds the letters that occur
// exactly once, in alphabetical order (uppercase first), after the ellipsis axes. '...' stands
// for the leading axes an operand's letters do not name; those axes align from the right across
// operands and broadcast (a length-1 axis stretches to its partners' length, for letters too). An
// explicit output without '...' sums the ellipsis axes. A letter repeated within one operand
// takes that operand's diagonal; a letter absent from the output is summed. Spaces are ignored.
//
// Lowering: einsum is a composite of the core primitives, so every derivative (any order) comes
// from their rules. Per operand: reshape away broadcast length-1 axes, extract_diag for repeated
// letters, reduce_sum for letters no other operand or the output has. Then one dot_general per
// step of the contraction path (tenferro/einsum_path.hpp): shared letters still needed later are
// its batch axes, the others its contracting axes, in the larger operand's axis order so that the
// GEMM reads it in place. Intermediates keep dot_general's axis order (batch, lhs free, rhs free):
// one transpose, at the end, gives the output's order (and the executor may fold it).
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tenferro/einsum_path.hpp"
#include "tenferro/semiring.hpp"
#include "tenferro/traced.hpp"

namespace tenferro {

namespace tn {

/// Subscripts resolved against the operands' shapes: every axis named by a dense label id.
/// Letters take ids in order of first appearance; ellipsis axes follow.
struct Subscripts {
  std::vector<std::vector<Label>> inputs;  ///< per operand, per axis (a label may repeat)
  std::vector<Label> output;
  std::vector<std::int64_t> size;          ///< the broadcast length of each label
  std::vector<std::string> names;          ///< per label, for messages: "index 'j'", "label 17"
};

/// Parses `subscripts` for operands of the given shapes. Throws ValueError for malformed
/// subscripts (naming the position), and ShapeError for an operand count or rank that does not
/// match, or lengths of one letter that disagree (naming the letter, operands and axes).
Subscripts parse(std::string_view subscripts, std::span<const Shape> shapes);
/// The same from integer labels (NumPy's sublist form; any labels >= 0, so networks may have more
/// than the 52 letters): inputs[k] labels operand k's axes, `output` the result's. Errors as parse.
Subscripts from_labels(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output,
                       std::span<const Shape> shapes);

/// How einsum contracts: the path search (PathOptions), or an explicit path in SSA form, and the
/// algebra. In a tropical semiring (tenferro/semiring.hpp) the sums of the expression are its sum
/// (max or min) and the products its product (+ or *): pairwise steps are semiring_dot_general,
/// letters of one operand are reduced by reduce_max / reduce_min, and the path search is the
/// same (the cost model counts element operations, whatever they are). Such an einsum is not
/// differentiable (ADRuleError).
struct Options {
  PathOptions path;
  std::vector<std::pair<int, int>> explicit_path;  ///< used when non-empty
  Semiring semiring = Semiring::Standard;
};

/// A concrete einsum as its slices (the path sliced to options.path.memory_limit; one slice when
/// it is not sliced), to be run in ranges and combined: what a contraction spread over several
/// processes needs. Slice k fixes the sliced labels to the k-th reading of an odometer over them
/// (the last label fastest). run(0, slices()) is einsum's result bit for bit; the results of
/// consecutive ranges combined in order equal it up to rounding (exactly under max and min).
class SlicedEinsum {
 public:
  SlicedEinsum(std::string_view subscripts, std::vector<Tensor> operands, const Options& options = {});
  std::int64_t slices() const;
  const ContractionPath& path() const;
  /// The semiring sum of slices [begin, end), in order, into a fresh tensor of the result's type
  /// (the semiring's zero for an empty range). ValueError for a range outside [0, slices()].
  Tensor run(std::int64_t begin, std::int64_t end) const;
  /// into = into (+) part elementwise in the semiring (+, max or min); both of the result's type.
  void combine(Tensor& into, const Tensor& part) const;
  /// The gradients of <cotangent, run(begin, end)> with respect to each operand (full shapes:
  /// each slice's part lands where the slice read it), by reverse mode through each slice's
  /// program; summed over ranges they are the whole einsum's vjp. Standard semiring only
  /// (ADRuleError otherwise); ShapeError for a cotangent not of the result's type.
  std::vector<Tensor> vjp(std::int64_t begin, std::int64_t end, const Tensor& cotangent) const;

 private:
  struct State;
  std::shared_ptr<const State> state_;
};

}  // namespace tn

/// The contraction path einsum would take for operands of these shapes (cached per structure).
tn::ContractionPath einsum_path(std::string_view subscripts, std::span<const Shape> shapes,
                                    const tn::Options& options = {});
tn::ContractionPath einsum_path(std::string_view subscripts, std::initializer_list<Shape> shapes,
                                    const tn::Options& options = {});

/// Traced einsum. Operands share one dtype (DTypeError otherwise) and one trace. A memory limit
/// in options.path is honoured by the concrete form only (a traced program is not sliced).
Traced einsum(std::string_view subscripts, std::span<const Traced> operands, const tn::Options& options = {});
Traced einsum(std::string_view subscripts, std::initializer_list<Traced> operands,
              const tn::Options& options = {});
template <class... T>
  requires(std::is_convertible_v<const T&, const Traced&> && ...)
Traced einsum(std::string_view subscripts, const Traced& first, const T&... rest) {
  return einsum(subscripts, {first, rest...});
}

/// einsum with integer labels (tn::from_labels), for networks beyond 52 letters.
Traced einsum(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output,
              std::span<const Traced> operands, const tn::Options& options = {});
Tensor einsum(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output,
              std::span<const Tensor> operands, const tn::Options& options = {});
tn::ContractionPath einsum_path(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output,
                                std::span<const Shape> shapes, const tn::Options& options = {});

/// Concrete einsum: the lowered program is compiled once per (subscripts, operand types, options)
/// and cached. With options.path.memory_limit, the path is sliced so that no intermediate of one
/// slice exceeds the limit (elements), and the compiled program of one slice runs once per slice:
/// outputs of sliced output letters are written in place, sums over sliced letters accumulate.
Tensor einsum(std::string_view subscripts, std::span<const Tensor> operands, const tn::Options& options = {});
Tensor einsum(std::string_view subscripts, std::initializer_list<Tensor> operands,
              const tn::Options& options = {});

}  // namespace tenferro
