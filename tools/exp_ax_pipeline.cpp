#include "exp_ax_pipeline.hpp"

#include <cmath>
#include <span>
#include <vector>

#include "computegraph/computegraph.hpp"
#include "tidu/reference/scalar_graph.hpp"
#include "tidu/tidu.hpp"

namespace tools {

void print_exp_ax_pipeline(std::ostream& os) {
  namespace cg = computegraph;
  using tidu::reference::DType;
  using tidu::reference::Number;
  using tidu::reference::ScalarKey;
  using tidu::reference::ScalarOp;
  using Key = cg::ValueKey<ScalarOp>;
  using Keys = std::span<const Key>;

  // Step 1: build the primal graph F0.
  tidu::reference::ScalarGraph builder;
  auto x = builder.input("x");
  auto a = builder.input("a");
  builder.output(builder.exp(builder.mul(x, a)));
  auto f0 = builder.finish();
  os << "## F0 = build\n" << cg::to_string(*f0);

  // Step 2: linearize the resolved primal view with respect to x.
  const std::vector<ScalarKey> wrt{{"x", DType::Real}};
  const auto y = f0->output_keys();
  auto l1 = tidu::linearize(cg::resolve({f0}), Keys(y), std::span<const ScalarKey>(wrt));
  os << "\n## L1 = linearize(resolve([F0]), outputs=[y], wrt=[x])\n" << cg::to_string(*l1.graph);

  // Step 4: transpose the linear graph.
  auto t1 = tidu::linear_transpose(l1);
  os << "\n## T1 = linear_transpose(L1)\n" << cg::to_string(*t1.graph);

  // Step 5: materialize only when compiling: y and ct_x in one program.
  const std::vector<Key> wanted{y[0], t1.graph->key(*t1.tangent_outputs[0])};
  auto materialized = cg::materialize_merge(cg::resolve({f0, t1.graph}), Keys(wanted));
  os << "\n## materialize_merge(resolve([F0, T1]), [y, ct_x])\n" << cg::to_string(materialized);
  auto program = cg::compile(materialized);
  os << "\n## compile\n" << cg::to_string(program);

  const double xv = 0.5, av = 2.0;
  auto out = program.run({xv, av, 1.0});
  os << "\n## run at x=" << xv << ", a=" << av << ", ct_y=1\n"
     << "y    = " << out[0] << "   (closed form exp(a*x) = " << Number(std::exp(av * xv)) << ")\n"
     << "ct_x = " << out[1] << "   (closed form a*exp(a*x) = " << Number(av * std::exp(av * xv))
     << ")\n";

  // Higher order: resolve([F0, L1]) and linearize again; no physical merge in between.
  const auto dy = l1.tangent_output_keys();
  const std::vector<Key> l1_out{*dy[0]};
  auto l2 = tidu::linearize(cg::resolve({f0, l1.graph}), Keys(l1_out), std::span<const ScalarKey>(wrt));
  os << "\n## L2 = linearize(resolve([F0, L1]), outputs=[dy], wrt=[x])\n" << cg::to_string(*l2.graph);
  const std::vector<Key> d2{l2.graph->key(*l2.tangent_outputs[0])};
  auto second = cg::compile(cg::materialize_merge(cg::resolve({l2.graph}), Keys(d2)));
  auto d2y = second.run_by_key(std::vector<std::pair<ScalarKey, Number>>{
      {{"x", DType::Real}, xv}, {{"a", DType::Real}, av},
      {l1.tangent_input_keys()[0], 1.0}, {l2.tangent_input_keys()[0], 1.0}});
  os << "\nd2y (unit seeds) = " << d2y[0] << "   (closed form a^2*exp(a*x) = "
     << Number(av * av * std::exp(av * xv)) << ")\n";
}

}  // namespace tools
