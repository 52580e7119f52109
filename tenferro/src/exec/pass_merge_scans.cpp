// Merging scans (see passes.hpp). Reverse mode through a scan runs its body twice over the same
// operands: once for the primal value, once in the scan that also stacks the residuals of the
// linear part (src/ops/scan.cpp builds that body from the same input keys, with the primal body's
// outputs first). Keys are structure, so "the larger body returns everything the smaller one
// does" is a comparison of output keys; the smaller scan is dropped and its results are read from
// the larger one's, which then runs at the earlier of the two positions (their operands are the
// same values, so they are ready there). The results are the same bits: the same body on the same
// values.
#include <unordered_map>

#include "passes.hpp"
#include "tenferro/ops/control_attrs.hpp"

namespace tenferro::exec {

namespace {
/// Whether scan `big` computes every result of scan `small` (the first small.out.size() results).
bool covers(const Step& big, const Step& small) {
  if (big.in != small.in || big.out.size() < small.out.size()) return false;
  const auto& b = big.op.attrs.get<ScanAttrs>();
  const auto& s = small.op.attrs.get<ScanAttrs>();
  if (b.length != s.length || b.reverse != s.reverse || b.n_carry != s.n_carry || b.n_xs != s.n_xs ||
      b.n_consts != s.n_consts || b.body.region.input_keys() != s.body.region.input_keys()) {
    return false;
  }
  const auto& bo = b.body.region.output_keys();
  const auto& so = s.body.region.output_keys();
  for (std::size_t k = 0; k < so.size(); ++k) {
    if (!(bo[k] == so[k])) return false;
  }
  return true;
}
}  // namespace

ExecProgram merge_scans(ExecProgram program) {
  std::vector<std::size_t> scans;
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    const Step& s = program.steps[i];
    if (s.kind == StepKind::Op && s.op.attrs.holds<ScanAttrs>()) scans.push_back(i);
  }
  if (scans.size() < 2) return program;
  std::vector<bool> dropped(program.steps.size(), false);
  std::unordered_map<ValueId, ValueId> renamed;
  for (std::size_t a = 0; a < scans.size(); ++a) {
    for (std::size_t c = a + 1; c < scans.size(); ++c) {
      const std::size_t i = scans[a], j = scans[c];  // i runs first
      if (dropped[i] || dropped[j]) continue;
      Step& first = program.steps[i];
      Step& second = program.steps[j];
      std::size_t gone;
      if (covers(first, second)) {
        gone = j;
      } else if (covers(second, first)) {
        std::swap(first, second);  // the larger scan runs at the earlier position
        gone = j;
      } else {
        continue;
      }
      const Step& kept = program.steps[i];
      const Step& small = program.steps[gone];
      for (std::size_t k = 0; k < small.out.size(); ++k) renamed[small.out[k]] = kept.out[k];
      dropped[gone] = true;
    }
  }
  if (renamed.empty()) return program;
  // A kept scan may itself be dropped for a larger one later: follow the chain.
  auto rename = [&](ValueId v) {
    for (auto it = renamed.find(v); it != renamed.end(); it = renamed.find(v)) v = it->second;
    return v;
  };
  ExecProgram out;
  out.types = std::move(program.types);
  out.inputs = std::move(program.inputs);
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    if (dropped[i]) continue;
    Step step = std::move(program.steps[i]);
    for (ValueId& v : step.in) v = rename(v);
    out.steps.push_back(std::move(step));
  }
  for (ValueId v : program.outputs) out.outputs.push_back(rename(v));
  return out;
}

}  // namespace tenferro::exec
