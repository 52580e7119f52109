// Folding transposes into dot_general's dimension numbers (see passes.hpp). The GEMM kernel reads
// a permuted operand through BLAS's transpose flags or strides, so the copy a transpose makes is
// saved; the transpose step itself is left for eliminate_dead_code when nothing else reads it.
#include <algorithm>

#include "passes.hpp"

namespace tenferro::exec {

using Axes = std::vector<std::int64_t>;

Axes free_axes(const Axes& batch, const Axes& contract, std::size_t rank) {
  Axes free;
  for (std::int64_t a = 0; a < static_cast<std::int64_t>(rank); ++a) {
    if (std::find(batch.begin(), batch.end(), a) == batch.end() &&
        std::find(contract.begin(), contract.end(), a) == contract.end()) {
      free.push_back(a);
    }
  }
  return free;
}

namespace {

Axes mapped(const Axes& axes, const Axes& perm) {
  Axes out;
  for (auto a : axes) out.push_back(perm[static_cast<std::size_t>(a)]);
  return out;
}

/// Rewrites one side of the dimension numbers for operand y = transpose(x, perm) read as x; false
/// if the free axes would come out in another order (the result layout would change).
bool fold_side(Axes& batch, Axes& contract, const Axes& perm) {
  Axes free = mapped(free_axes(batch, contract, perm.size()), perm);
  if (!std::is_sorted(free.begin(), free.end())) return false;
  batch = mapped(batch, perm);
  contract = mapped(contract, perm);
  return true;
}
}  // namespace

ExecProgram fold_transposes(ExecProgram p) {
  std::vector<const Step*> producer(p.types.size(), nullptr);
  for (const Step& s : p.steps) {
    for (auto v : s.out) producer[v] = &s;
  }
  for (Step& s : p.steps) {
    if (s.kind != StepKind::Op || !s.op.def->dot_dims_contraction) continue;
    for (std::size_t side = 0; side < 2; ++side) {
      const Step* t = producer[s.in[side]];
      if (!t || t->kind != StepKind::Op || t->op.def->layout != Layout::Transpose) continue;
      DotDims dims = s.op.attrs.get<DotDims>();
      const Axes& perm = t->op.attrs.get<Permutation>().perm;
      const bool ok = side == 0 ? fold_side(dims.lhs_batch, dims.lhs_contract, perm)
                                : fold_side(dims.rhs_batch, dims.rhs_contract, perm);
      if (!ok) continue;
      s.op.attrs = OpAttrs(std::move(dims));
      s.in[side] = t->in[0];
    }
  }
  return p;
}

}  // namespace tenferro::exec
