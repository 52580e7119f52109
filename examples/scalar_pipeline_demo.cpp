// The scalar example f(x) = exp(a * x) (docs/design.md, "Worked examples") through the whole
// computegraph pipeline: build -> resolve -> materialize_merge -> compile -> run, printing the IR
// of every stage and writing the graph's Graphviz DOT.
#include <cmath>
#include <fstream>
#include <iostream>
#include <vector>

#include "scalar_ops.hpp"

int main(int argc, char** argv) {
  using namespace computegraph;
  using cgtest::ScalarOp;

  // build
  cgtest::Builder builder;
  auto x = builder.add_input("x");
  auto a = builder.add_input("a");
  auto ax = builder.add(ScalarOp::mul(), {cgtest::L(x), cgtest::L(a)});
  auto y = builder.add(ScalarOp::exp(), {cgtest::L(ax)});
  builder.add_output(y);
  auto graph = builder.finish();
  std::cout << "== build ==\n" << to_string(*graph);

  // resolve -> materialize_merge -> compile
  auto view = resolve({graph});
  auto outputs = graph->output_keys();
  auto materialized = materialize_merge(view, std::span<const cgtest::Key>(outputs));
  std::cout << "\n== materialize_merge ==\n" << to_string(materialized);
  auto program = compile(materialized);
  std::cout << "\n== compile ==\n" << to_string(program);

  // run (compile once, run many)
  std::cout << "\n== run ==\n";
  for (double xv : {0.0, 0.5, 1.0}) {
    double av = 2.0;
    auto out = program.run({xv, av});
    std::cout << "exp(" << av << " * " << xv << ") = " << out[0]
              << "   (std::exp: " << std::exp(av * xv) << ")\n";
  }

  const char* dot_path = argc > 1 ? argv[1] : "exp_ax.dot";
  std::ofstream(dot_path) << to_dot(*graph, "exp(a*x)");
  std::cout << "\nwrote Graphviz DOT to " << dot_path << "\n";
  return 0;
}
