// Control flow from Python (tenferro/control_flow.hpp), in JAX's calling conventions: a carry,
// xs or operands given as one Traced reach the callable as one Traced, given as a tuple or list
// they reach it as a tuple, and the callable returns the same structure. The values given (carry,
// xs, operands, x0, params, pred, index) are operands as anywhere else (module.hpp, Operands): a
// NumPy array, Tensor or Python scalar among them becomes a constant of the trace of a traced one;
// a list or tuple is always a structure of values, never one nested-sequence tensor.
#include <array>
#include <string_view>

#include "module.hpp"
#include "tenferro/buffer_pool.hpp"

namespace tenferro::python {

namespace {

/// A structure of Traced values: one value, or a sequence of them (a tuple when handed back).
struct Values {
  TracedList list;
  bool single = false;
};

Values values_of(const py::handle& x, const char* who, const char* what) {
  if (x.is_none()) return {};
  if (py::isinstance<Traced>(x)) return {{x.cast<Traced>()}, true};
  if (py::isinstance<py::tuple>(x) || py::isinstance<py::list>(x)) {
    Values v;
    for (const auto& item : x) {
      if (!py::isinstance<Traced>(item)) {
        throw py::type_error(std::string(who) + ": " + what + " must hold Traced values, found a " +
                             std::string(py::str(py::type::of(item))));
      }
      v.list.push_back(item.cast<Traced>());
    }
    return v;
  }
  throw py::type_error(std::string(who) + ": " + what + " must be a Traced value or a tuple of them, not a " +
                       std::string(py::str(py::type::of(x))));
}

/// A structure of operands (None, one operand, or a tuple or list of them) given to a control-flow
/// function: noted in `ops` first (so that any traced one gives the trace), then made Values by
/// get().
struct Given {
  py::handle x;
  Slot slot = Slot::Value;
  bool structure = true;  ///< false: one operand even if it is a list (a predicate, an index)

  bool is_sequence() const { return structure && (py::isinstance<py::tuple>(x) || py::isinstance<py::list>(x)); }
  void add_to(Operands& ops) const {
    if (x.is_none()) return;
    if (is_sequence()) {
      ops.add_list(x, slot);
    } else {
      ops.add(x, slot);
    }
  }
  Values get(const Operands& ops) const {
    if (x.is_none()) return {};
    if (is_sequence()) return {ops.get_list(x, slot), false};
    return {{ops.get(x, slot)}, true};
  }
};

/// The Values of each of `given`, coerced together by `ops` (the one Operands of the call, whose
/// result() then hands the call's results back as its mode wants).
template <std::size_t N>
std::array<Values, N> operands_of(Operands& ops, const std::array<Given, N>& given) {
  for (const auto& g : given) g.add_to(ops);
  ops.record_in_active_trace();
  std::array<Values, N> out;
  for (std::size_t i = 0; i < N; ++i) out[i] = given[i].get(ops);
  return out;
}

py::object to_python(const TracedList& values, bool single) {
  if (single) return py::cast(values.at(0));
  py::tuple t(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) t[i] = py::cast(values[i]);
  return std::move(t);
}

/// A result of the callable with the structure `like` has.
TracedList results_like(const py::handle& r, const Values& like, const char* who, const char* what) {
  Values v = values_of(r, who, what);
  if (like.single != v.single && !(like.list.empty() && v.list.empty())) {
    throw py::type_error(std::string(who) + ": " + what + " must have the structure of the initial value (" +
                         (like.single ? "one Traced" : "a tuple") + ")");
  }
  return v.list;
}

/// The binding of an implicit solver (fixed_point, root): `solve` called with the Python function
/// f(x, params) on values shaped like x0 and params, its result checked to be shaped like x0.
template <class Options, class Solve>
auto implicit_solver(Solve solve, const char* who, const char* result) {
  return [solve, who, result](py::function f, const py::object& x0, const py::object& params, double tol,
                              std::int64_t max_iter, std::int64_t derivative_steps) {
    Operands ops(std::string("tenferro.") + who);
    const auto given = operands_of<2>(ops, {Given{x0}, Given{params}});
    const Values &x = given[0], &p = given[1];
    auto fn = [&](const TracedList& v, const TracedList& q) {
      return results_like(f(to_python(v, x.single), to_python(q, p.single)), x, who, result);
    };
    return ops.result(to_python(solve(fn, x.list, p.list, Options{tol, max_iter, derivative_steps}), x.single));
  };
}

/// The docstring of an R entry's function (optional: an op without one gets a pointer to the docs).
const char* region_op_doc(std::string_view name) {
  if (name == "map") {
    return "``f`` applied to the slices ``xs[t]`` of its operands along their leading axis, one step after another;\n"
           "the results stacked along a new leading axis (jax.lax.map). Values f closes over are passed whole to\n"
           "every step. Unlike vmap, memory holds one step's values at a time.\n"
           "\n"
           ">>> tf.map(lambda row: tf.sum(row * row), np.array([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()\n"
           "[5.0, 25.0]\n";
  }
  return "A region op of tenferro's op list: f traced into its body (docs/tenferro.md).";
}
}  // namespace

void bind_control(py::module_& m) {
  m.def("scan", [](py::function f, const py::object& init, const py::object& xs, std::optional<std::int64_t> length,
                   bool reverse, std::int64_t checkpoint_every, std::int64_t checkpoint_snapshots) {
    Operands ops(std::string("tenferro.scan"));
    const auto given = operands_of<2>(ops, {Given{init}, Given{xs}});
    const Values &carry0 = given[0], &x0 = given[1];
    bool ys_single = false;
    auto body = [&](const TracedList& c, const TracedList& x) {
      py::object r = f(to_python(c, carry0.single), x0.list.empty() ? py::none() : to_python(x, x0.single));
      if (!py::isinstance<py::tuple>(r) || py::len(r) != 2) {
        throw py::type_error("scan: f must return a pair (carry, y)");
      }
      const py::tuple pair = r;
      const TracedList next = results_like(pair[0], carry0, "scan", "the returned carry");
      const Values ys = values_of(pair[1], "scan", "y");
      ys_single = ys.single;
      return std::pair{next, ys.list};
    };
    auto [carry, ys] = scan(body, carry0.list, x0.list, ScanOptions{length, reverse, checkpoint_every, checkpoint_snapshots});
    return ops.result(py::make_tuple(to_python(carry, carry0.single), ys.empty() ? py::none() : to_python(ys, ys_single)));
  }, py::arg("f"), py::arg("init"), py::arg("xs") = py::none(), py::arg("length") = py::none(),
     py::arg("reverse") = false, py::arg("checkpoint_every") = 0, py::arg("checkpoint_snapshots") = 0,
        "(carry, ys) with (carry, y_t) = f(carry, x_t) over the leading axis of xs (jax.lax.scan).\n"
        "\n"
        "checkpoint_every=k runs the steps in checkpointed blocks of k (reverse mode keeps every k-th\n"
        "carry); checkpoint_snapshots=s is binomial checkpointing (revolve): reverse mode stores at most s\n"
        "carries and recomputes the others with the fewest steps possible. Without xs,\n"
        "length gives the number of steps; reverse=True runs from the last x to the first.\n"
        "\n"
        ">>> carry, ys = tf.scan(lambda c, x: (c + x, c * x), 0.0, np.array([1.0, 2.0, 3.0]))\n"
        ">>> carry.item(), ys.numpy().tolist()\n"
        "(6.0, [0.0, 2.0, 9.0])\n");
  m.def("fori_loop", [](std::int64_t lower, std::int64_t upper, py::function body, const py::object& init,
                        std::int64_t checkpoint_every, std::int64_t checkpoint_snapshots) {
    Operands ops(std::string("tenferro.fori_loop"));
    const Values c0 = operands_of<1>(ops, {Given{init}})[0];
    auto step = [&](const Traced& i, const TracedList& c) {
      return results_like(body(py::cast(i), to_python(c, c0.single)), c0, "fori_loop", "the returned carry");
    };
    return ops.result(to_python(fori_loop(lower, upper, step, c0.list, {checkpoint_every, checkpoint_snapshots}), c0.single));
  }, py::arg("lower"), py::arg("upper"), py::arg("body"), py::arg("init"), py::arg("checkpoint_every") = 0,
     py::arg("checkpoint_snapshots") = 0,
        "body(i, carry) for i = lower, ..., upper - 1, starting from init (jax.lax.fori_loop).\n"
        "\n"
        "checkpoint_every and checkpoint_snapshots choose reverse mode's memory over the steps, as in scan.\n"
        "\n"
        ">>> tf.fori_loop(0, 3, lambda i, c: c * 2.0, np.array([1.0])).numpy().tolist()\n"
        "[8.0]\n");
  auto branch = [](py::function fn) -> Branch {
    return [fn = std::move(fn)](const TracedList& o) { return traced_results(fn(*py::tuple(to_python(o, false)))); };
  };
  m.def("cond", [branch](const py::object& pred, py::function on_true, py::function on_false, const py::args& operands) {
    Operands ops(std::string("tenferro.cond"));
    const auto given = operands_of<2>(ops, {Given{pred, Slot::Pred, false}, Given{operands}});
    const TracedList r = cond(given[0].list.at(0), branch(on_true), branch(on_false), given[1].list);
    return ops.result(r.size() == 1 ? py::cast(r[0]) : to_python(r, false));
  }, py::arg("pred"), py::arg("true_fun"), py::arg("false_fun"),
        "``true_fun(*operands)`` if pred else ``false_fun(*operands)``; only the chosen branch runs (jax.lax.cond).\n"
        "\n"
        "pred may be a traced bool scalar: the choice is recorded, and derivatives flow through the branch\n"
        "taken.\n"
        "\n"
        ">>> tf.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, np.array([5.0])).numpy().tolist()\n"
        "[6.0]\n"
        ">>> f = lambda x: tf.cond(tf.sum(x) > 0.0, lambda y: tf.sum(y * y), lambda y: tf.sum(-y), x)\n"
        ">>> tf.grad(f)(np.array([3.0])).numpy().tolist(), tf.grad(f)(np.array([-3.0])).numpy().tolist()\n"
        "([6.0], [-1.0])\n");
  // The region ops of the op list's R entries (tenferro/op_list.hpp): tf.name(f, *operands).
#define TENFERRO_PY_LIST_REGION(X, kind, name)                                                          \
  m.def(#name, [branch](py::function f, const py::args& operands) {                                    \
    Operands ops(std::string("tenferro." #name));                                                      \
    const Values o = operands_of<1>(ops, {Given{operands}})[0];                                        \
    const TracedList r = ::tenferro::name(branch(f), o.list);                                          \
    return ops.result(r.size() == 1 ? py::cast(r[0]) : to_python(r, false));                          \
  }, py::arg("f"), region_op_doc(#name));
  TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP_M,
                   TENFERRO_PY_LIST_REGION)
#undef TENFERRO_PY_LIST_REGION
  m.def("switch", [branch](const py::object& index, const std::vector<py::function>& branches, const py::args& operands) {
    Operands ops(std::string("tenferro.switch"));
    const auto given = operands_of<2>(ops, {Given{index, Slot::Index, false}, Given{operands}});
    const Values& o = given[1];
    std::vector<Branch> bs;
    for (const auto& b : branches) bs.push_back(branch(b));
    const TracedList r = switch_case(given[0].list.at(0), bs, o.list);
    return ops.result(r.size() == 1 ? py::cast(r[0]) : to_python(r, false));
  }, py::arg("index"), py::arg("branches"),
        "``branches[clamp(index)](*operands)``: the branch at index, clamped into range (jax.lax.switch).\n"
        "\n"
        ">>> tf.switch(1, [lambda x: x, lambda x: 2.0 * x, lambda x: 3.0 * x], np.array([1.0])).numpy().tolist()\n"
        "[2.0]\n");
  m.def("_checkpoint_call", [branch](py::function f, const std::string& policy, const std::vector<std::string>& names,
                                     const py::args& operands) {
    Operands ops(std::string("tenferro.checkpoint"));
    const Values o = operands_of<1>(ops, {Given{operands}})[0];
    CheckpointOptions options{.names = names};
    if (policy == "dots") {
      options.policy = CheckpointPolicy::SaveDots;
    } else if (policy == "names") {
      options.policy = CheckpointPolicy::SaveNamed;
    } else if (policy == "everything") {
      options.policy = CheckpointPolicy::SaveEverything;
    } else if (policy != "nothing") {
      throw py::value_error("tenferro.checkpoint: policy='" + policy + "'; expected 'nothing', 'dots', 'names' or 'everything'");
    }
    const TracedList r = checkpoint(branch(f), o.list, options);
    return ops.result(r.size() == 1 ? py::cast(r[0]) : to_python(r, false));
  }, py::arg("f"), py::arg("policy"), py::arg("names"), "f(*operands) as a checkpoint under a policy (tenferro.checkpoint).");
  m.def("checkpoint_name", [](const py::object& x, std::string name) {
          Operands ops(std::string("tenferro.checkpoint_name"));
          const Values o = operands_of<1>(ops, {Given{x, Slot::Value, false}})[0];
          return ops.result(py::cast(checkpoint_name(o.list.at(0), std::move(name))));
        }, py::arg("x"), py::arg("name"),
        "x, named for tenferro.checkpoint(f, policy=\"names\") (jax.ad_checkpoint.checkpoint_name): the identity, "
        "derivatives included.\n"
        "\n"
        ">>> f = tf.checkpoint(lambda x: tf.sin(tf.checkpoint_name(tf.sin(x), \"h\")), policy=\"names\")\n"
        ">>> round(tf.grad(lambda x: tf.sum(f(x)))(np.array([0.5])).item(), 4)\n"
        "0.7786\n");
  m.def("_rematerialize_call", [branch](py::function f, std::size_t memory_limit, std::size_t checkpoints,
                                        const py::args& operands) {
    Operands ops(std::string("tenferro.rematerialize"));
    const Values o = operands_of<1>(ops, {Given{operands}})[0];
    const TracedList r = rematerialize(branch(f), o.list, RematOptions{memory_limit, checkpoints});
    return ops.result(r.size() == 1 ? py::cast(r[0]) : to_python(r, false));
  }, py::arg("f"), py::arg("memory_limit"), py::arg("checkpoints"),
     "f(*operands) cut into checkpoints to a memory limit (tenferro.rematerialize).");
  py::class_<MemoryMeter>(m, "MemoryMeter",
                          "The peak of tensor storage in use since it was made or reset, above the storage in use then "
                          "(process-wide).\n"
                          "\n"
                          ">>> meter = tf.MemoryMeter()\n"
                          ">>> x = tf.ones((1000,))\n"
                          ">>> meter.peak_bytes >= 8000\n"
                          "True\n")
      .def(py::init<>())
      .def("reset", &MemoryMeter::reset)
      .def_property_readonly("peak_bytes", &MemoryMeter::peak_bytes);
  m.def("while_loop", [](py::function cond_fn, py::function body, const py::object& init,
                         std::optional<std::int64_t> max_trips) {
    Operands ops(std::string("tenferro.while_loop"));
    const Values c0 = operands_of<1>(ops, {Given{init}})[0];
    auto c = [&](const TracedList& v) { return cond_fn(to_python(v, c0.single)).cast<Traced>(); };
    auto b = [&](const TracedList& v) {
      return results_like(body(to_python(v, c0.single)), c0, "while_loop", "the returned carry");
    };
    return ops.result(to_python(while_loop(c, b, c0.list, WhileOptions{max_trips}), c0.single));
  }, py::arg("cond_fun"), py::arg("body_fun"), py::arg("init_val"), py::arg("max_trips") = py::none(),
        "Runs body_fun while cond_fun holds; reverse-mode derivatives need max_trips.\n"
        "\n"
        "The carry init_val is a tensor or a tuple of them; body_fun returns one of the same types.\n"
        "\n"
        ">>> tf.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, np.array(1.0)).item()\n"
        "16.0\n"
        ">>> x, n = tf.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0, c[1] + 1), (np.array(1.0), "
        "np.array(0)))\n"
        ">>> x.item(), n.item()\n"
        "(16.0, 4)\n");
  m.def("fixed_point", implicit_solver<FixedPointOptions>(&fixed_point, "fixed_point", "f's result"), py::arg("f"),
        py::arg("x0"), py::arg("params"), py::arg("tol") = 1e-12, py::arg("max_iter") = 1000,
        py::arg("derivative_steps") = 100,
        "x = f(x, params), differentiated by the implicit-function theorem.\n"
        "\n"
        "Iterates x <- f(x, params) from x0 until no element moves by more than tol (or max_iter steps);\n"
        "the derivative solves the implicit-function theorem's linear system by derivative_steps\n"
        "Richardson iterations instead of going through the iterations.\n"
        "\n"
        ">>> round(tf.fixed_point(lambda x, a: tf.cos(x) * a, np.array(0.5), np.array(1.0)).item(), 6)\n"
        "0.739085\n"
        ">>> solve = lambda a: tf.fixed_point(lambda x, a: 0.5 * x + a, np.array(0.0), a)  # x = 2 a\n"
        ">>> round(tf.grad(solve)(np.array(1.0)).item(), 6)\n"
        "2.0\n");
  m.def("root", implicit_solver<RootOptions>(&root, "root", "g's result"), py::arg("g"), py::arg("x0"),
        py::arg("params"), py::arg("tol") = 1e-12, py::arg("max_iter") = 50, py::arg("derivative_steps") = 2,
        "g(x, params) = 0 by Newton's method, differentiated implicitly.\n"
        "\n"
        ">>> sqrt = lambda a: tf.root(lambda x, a: x * x - a, np.array(1.0), a)\n"
        ">>> round(sqrt(np.array(2.0)).item(), 6)\n"
        "1.414214\n"
        ">>> round(tf.grad(sqrt)(np.array(4.0)).item(), 6)\n"
        "0.25\n");
}

}  // namespace tenferro::python
